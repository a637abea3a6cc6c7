-- :PiSessions lists the workspace's sessions (vim.ui.select) and selects the
-- chosen one; :PiContext then shows that session in a scratch buffer.
local T = dofile(vim.env.PI_NVIM_TESTS .. '/harness.lua')

T.run('sessions', function()
  local newest = assert(vim.env.PI_NVIM_SESSION)
  local other = assert(vim.env.PI_NVIM_OTHER_SESSION)
  local done = T.record_done()
  T.wait_client()

  local calls = T.answer_select(function(s)
    return s.path == other
  end)
  vim.cmd('PiSessions')
  local ev = done.ok('pi.sessions')
  T.eq(1, #calls, 'a session picker was shown')
  local asked = calls[1]
  T.info('picker:\n%s', table.concat(asked.lines, '\n'))
  T.eq(2, #asked.items, 'sessions listed')
  -- The current session is Pi's most recent one (newest file mtime; the runner
  -- made the other file two hours older); the list is newest activity first.
  T.eq(newest, ev.result.current, 'current session before selecting')
  local paths = vim.tbl_map(function(s)
    return s.path
  end, asked.items)
  table.sort(paths)
  local want = { newest, other }
  table.sort(want)
  T.eq(want, paths, 'listed paths')
  T.ok(tostring(asked.items[1].modified) >= tostring(asked.items[2].modified),
    'newest activity first: %s, %s', tostring(asked.items[1].modified), tostring(asked.items[2].modified))
  for i, s in ipairs(asked.items) do
    local marked = asked.lines[i]:match('^%* ') ~= nil
    T.eq(s.path == newest, marked, 'current-session mark on picker line ' .. i)
    T.ok(type(s.messageCount) == 'number', 'messageCount of %s', s.path)
  end

  local sel = done.ok('pi.selectSession')
  T.eq(other, sel.arguments.path, 'path sent')
  T.eq(other, sel.result.session, 'selected session')

  vim.cmd('PiContextInfo')
  local ctx = done.ok('pi.context')
  T.eq(other, ctx.result.session, 'pi.context session after selecting')
  T.eq('pi://context', vim.api.nvim_buf_get_name(0), 'context buffer')
  local text = table.concat(vim.api.nvim_buf_get_lines(0, 0, -1, false), '\n')
  T.info('%s', text)
  T.ok(text:find(other, 1, true), 'the context buffer names the selected session')
  T.ok(text:find('tokens', 1, true), 'the context buffer shows the token usage')
  T.ok(require('pi_lsp').statusline() ~= '', 'the statusline shows the usage')
end)
