-- :PiContext on a session compacted first (:PiCompact): a floating window shows one text
-- bar per kind of pi/contextBreakdown's answer (kind, tokens, share), the same figures
-- `pi-lsp context-size --by kind --json` prints for the file, the largest entries, and
-- the sparkline of the context's size along the path with the compaction marked under
-- it. <CR> on a largest entry closes the float and opens :PiTree with the cursor on that
-- entry. The picture follows the file as another writer appends to it.
local T = dofile(vim.env.PI_NVIM_TESTS .. '/harness.lua')

T.run('context_picture', function()
  local session = assert(vim.env.PI_NVIM_SESSION)
  local done = T.record_done()
  T.wait_client()
  local human = require('pi_lsp.ui').human
  local picture = require('pi_lsp.context_picture')

  vim.cmd('PiCompact')
  done.ok('pi.compact', 60000)

  vim.cmd('PiContext')
  local ev = done.ok('pi.contextBreakdown')
  local r = ev.result
  local buf = vim.api.nvim_get_current_buf()
  T.eq('pi://context-picture', vim.api.nvim_buf_get_name(buf), 'current buffer')
  T.ok(vim.api.nvim_win_get_config(0).relative ~= '', 'the picture opens in a floating window')
  local lines = vim.api.nvim_buf_get_lines(buf, 0, -1, false)
  local text = table.concat(lines, '\n')
  T.info('%s', text)

  -- The kinds: the server's, the CLI's for the file, each a bar line.
  local code, out, err = T.system({ vim.env.PI_LSP_BIN, 'context-size', session, '--by', 'kind', '--json' })
  T.eq(0, code, 'pi-lsp context-size exit (' .. err .. ')')
  local cli = vim.json.decode(out)
  T.eq(cli.total, r.total, 'total: CLI and server')
  T.eq(#cli.kinds, #r.kinds, 'kinds: CLI and server')
  local sum = 0
  for i, k in ipairs(r.kinds) do
    T.eq({ cli.kinds[i].kind, cli.kinds[i].tokens }, { k.kind, k.tokens }, 'kind ' .. i)
    sum = sum + k.tokens
    local share = ('%.1f%%'):format(100 * k.tokens / r.total)
    local found
    for _, l in ipairs(lines) do
      if l:find('  ' .. k.kind .. ' ', 1, true) and l:find(' ' .. human(k.tokens) .. ' ', 1, true) and l:find(share, 1, true) and l:find('█', 1, true) then
        found = l
      end
    end
    T.ok(found, 'a bar line for %s (%s, %s)', k.kind, human(k.tokens), share)
  end
  T.eq(r.total, sum, 'the kinds add up to the total')
  T.ok(text:find('compacts above ' .. human(r.threshold), 1, true), 'the threshold is named')

  -- The sparkline: one point per reply and event, the compaction marked.
  T.ok(type(r.history) == 'table' and #r.history > 0, 'a history')
  local last = r.history[#r.history]
  T.eq('compaction', last.event, 'the last point is the compaction')
  local spark, marks = picture.sparkline(r.history, 200)
  T.eq(#r.history, vim.fn.strchars(spark), 'one spark per point')
  T.eq('C', marks:sub(-1), 'the compaction is marked under its spark')
  T.ok(text:find(spark, 1, true) and text:find(marks, 1, true), 'the sparkline and its markers are shown')
  T.ok(text:find(('compaction %s: %s → %s'):format(last.entryId, human(last.tokensBefore), human(last.tokens)), 1, true),
    'the compaction before → after')

  -- <CR> on the largest entry shows it in the tree.
  local largest, top = nil, -1
  for _, k in ipairs(r.kinds) do
    for _, e in ipairs(k.largest or {}) do
      if e.tokens > top then
        largest, top = e, e.tokens
      end
    end
  end
  local lnum = picture.line_of(buf, largest.entryId)
  T.ok(lnum, 'the largest entry %s is listed', largest.entryId)
  vim.api.nvim_win_set_cursor(0, { lnum, 0 })
  vim.api.nvim_feedkeys(vim.api.nvim_replace_termcodes('<CR>', true, false, true), 'x', false)
  local tree = require('pi_lsp.tree')
  T.wait(10000, function()
    local b = vim.api.nvim_get_current_buf()
    local node = vim.api.nvim_buf_get_name(b) == 'pi://tree' and tree.node_at(b, vim.api.nvim_win_get_cursor(0)[1])
    return node and node.id == largest.entryId
  end, 'the tree with the cursor on ' .. largest.entryId)
  T.ok(not vim.api.nvim_buf_is_valid(buf), 'the float is closed')

  -- The picture follows the file.
  vim.cmd('PiContext')
  done.ok('pi.contextBreakdown')
  buf = vim.api.nvim_get_current_buf()
  local leaf = T.read_session(session)
  leaf = leaf[#leaf]
  local line = vim.json.encode({ type = 'message', id = 'feedc0de', parentId = leaf.id, timestamp = '2026-12-01T00:00:00.000Z',
    message = { role = 'user', content = { { type = 'text', text = string.rep('a fresh question ', 50) } }, timestamp = 1 } })
  local f = assert(io.open(session, 'a'))
  f:write(line .. '\n')
  f:close()
  T.wait(10000, function()
    local b = picture.buffers[buf]
    return b and b.result and b.result.leafId == 'feedc0de'
  end, 'the picture to follow the appended entry')
  T.ok(table.concat(vim.api.nvim_buf_get_lines(buf, 0, -1, false), '\n'):find('a fresh question', 1, true), 'the new message is among the largest')
end)
