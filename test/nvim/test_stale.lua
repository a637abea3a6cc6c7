-- Stale files: a session (written here into the workspace's Pi sessions
-- folder, its header cwd the workspace) whose path reads notes.txt. While
-- notes.txt holds what the read returned, nothing is stale; once it is
-- modified, the server's pi/fileOps lists it in `stale` (the plugin keeps it per
-- session: require('pi_lsp').stale(), the statusline) and :PiFiles marks it
-- "[stale: modified since read]" with type W; once deleted, "[stale: deleted]".
local T = dofile(vim.env.PI_NVIM_TESTS .. '/harness.lua')

T.run('stale', function()
  local ws = assert(vim.env.PI_NVIM_WORKSPACE)
  local dir = vim.fs.dirname(assert(vim.env.PI_NVIM_SESSION))
  local events = T.record_events({ 'PiFileOps' })
  local order = {}
  for _, pat in ipairs({ 'PiFileOps', 'PiSessionChanged', 'PiContextUsage', 'PiCommandDone' }) do
    vim.api.nvim_create_autocmd('User', { pattern = pat, callback = function(ev)
      order[#order + 1] = ('%d %s %s %s'):format(vim.uv.now(), pat, vim.fn.fnamemodify(ev.data.session or '', ':t'):sub(1, 20), ev.data.command or vim.json.encode(ev.data.stale or ev.data.tokens or ev.data.leafId))
    end })
  end
  local done = T.record_done()
  local notes = T.record_notify()
  T.wait_client()

  -- The session: the agent read notes.txt a minute ago and saw "alpha\n".
  local content = 'alpha\nbeta\n'
  local now = os.time()
  local function iso(t, ms)
    return os.date('!%Y-%m-%dT%H:%M:%S', t) .. ('.%03dZ'):format(ms or 0)
  end
  local t0 = now - 60
  local id = '01a2b3c4-d5e6-47f8-9a0b-c1d2e3f4a5b6'
  local header = { type = 'session', version = 3, id = id, timestamp = iso(t0), cwd = ws }
  local usage = { input = 100, output = 10, cacheRead = 0, cacheWrite = 0, totalTokens = 110,
    cost = { input = 0, output = 0, cacheRead = 0, cacheWrite = 0, total = 0 } }
  local function msg(eid, parent, t, m)
    m.timestamp = t * 1000
    return { type = 'message', id = eid, parentId = parent, timestamp = iso(t), message = m }
  end
  local entries = {
    header,
    msg('a0000001', vim.NIL, t0 + 1, { role = 'user', content = { { type = 'text', text = 'Please read notes.txt' } } }),
    msg('a0000002', 'a0000001', t0 + 2, {
      role = 'assistant',
      content = { { type = 'text', text = 'Reading it.' },
        { type = 'toolCall', id = 'call_1', name = 'read', arguments = { path = 'notes.txt' } } },
      api = 'openai-completions', provider = 'fake', model = 'fake-model', usage = usage, stopReason = 'toolUse',
    }),
    msg('a0000003', 'a0000002', t0 + 3, {
      role = 'toolResult', toolCallId = 'call_1', toolName = 'read',
      content = { { type = 'text', text = content } }, isError = false,
    }),
    msg('a0000004', 'a0000003', t0 + 4, {
      role = 'assistant', content = { { type = 'text', text = 'It says alpha and beta.' } },
      api = 'openai-completions', provider = 'fake', model = 'fake-model', usage = usage, stopReason = 'stop',
    }),
  }
  local lines = vim.tbl_map(vim.json.encode, entries)
  local session = dir .. '/' .. header.timestamp:gsub('[:.]', '-') .. '_' .. id .. '.jsonl'
  local file = ws .. '/notes.txt'
  local f = assert(io.open(file, 'wb'))
  f:write(content)
  f:close()
  T.eq(0, vim.fn.writefile(lines, session), 'writing the session')

  vim.cmd('PiSelectSession ' .. vim.fn.fnameescape(session))
  local sel = done.ok('pi.selectSession')
  T.eq(session, sel.result.session, 'selected session')

  -- Unchanged: read, not stale.
  vim.cmd('PiFiles')
  local ev = done.ok('pi.files')
  T.eq({ 'notes.txt' }, ev.result.readFiles, 'read files')
  T.eq(0, #(ev.result.stale or {}), 'nothing stale before the change: %s', vim.inspect(ev.result.stale))
  local qf = vim.fn.getqflist({ items = 0, title = 0 })
  T.eq({ 'read', '' }, { qf.items[1].text, qf.items[1].type }, 'quickfix item before the change')
  T.eq(0, #require('pi_lsp').stale(), 'stale() before the change')

  -- The server's first report of the session: nothing stale.
  local first = T.wait(10000, function()
    for _, e in ipairs(events.PiFileOps) do
      if e.session == session then
        return e
      end
    end
  end, 'pi/fileOps of the selected session')
  T.eq(0, #(first.stale or {}), 'stale in the first pi/fileOps: %s', vim.inspect(first.stale))

  -- Modified on disk: pi/fileOps reports it (the server checks every few seconds).
  local n_ops = #events.PiFileOps
  f = assert(io.open(file, 'wb'))
  f:write('alpha\nbeta\ngamma (changed by the user)\n')
  f:close()
  local ops = T.wait(20000, function()
    for i = n_ops + 1, #events.PiFileOps do
      local e = events.PiFileOps[i]
      if e.session == session and type(e.stale) == 'table' and e.stale[1] then
        return e
      end
    end
  end, 'pi/fileOps with notes.txt stale')
  T.eq({ 'notes.txt', 'modified' }, { ops.stale[1].path, ops.stale[1].reason }, 'stale entry of pi/fileOps')
  T.ok(type(ops.stale[1].readAt) == 'string' and type(ops.stale[1].modifiedAt) == 'string', 'readAt and modifiedAt')
  local st = require('pi_lsp').stale()
  T.eq({ 'notes.txt', 'modified' }, { st[1] and st[1].path, st[1] and st[1].reason }, "require('pi_lsp').stale()")
  local sl = require('pi_lsp').statusline()
  T.ok(sl:find('1 stale', 1, true), 'the statusline counts the stale file: %q', sl)
  local told = false
  for _, n in ipairs(notes) do
    if n.msg:find('notes.txt', 1, true) and n.msg:find('changed on disk', 1, true) then
      told = true
    end
  end
  T.ok(told, 'a notification names the stale file')

  -- :PiFiles marks it (bounded wait: run it until the mark shows).
  T.eq(nil, st[1].modifiedAt ~= nil and st[1].modifiedAt:match('^0001') or nil, 'modifiedAt is a real time')
  local item = T.wait(20000, function()
    vim.cmd('PiFiles')
    local e = done.ok('pi.files')
    local q = vim.fn.getqflist({ items = 0, title = 0 })
    for _, it in ipairs(q.items) do
      if vim.api.nvim_buf_get_name(it.bufnr) == file and it.text:find('stale', 1, true) then
        return { text = it.text, type = it.type, title = q.title }
      end
    end
    vim.wait(500)
  end, ':PiFiles to mark notes.txt stale')
  T.eq({ 'read [stale: modified since read]', 'W' }, { item.text, item.type }, 'quickfix item of the stale file')
  T.ok(item.title:find('1 stale', 1, true), 'quickfix title %q', item.title)
  T.ok(T.noted(notes, '1 file(s) changed on disk'), ':PiFiles says how many files are stale')

  -- Deleted.
  os.remove(file)
  item = T.wait(20000, function()
    vim.cmd('PiFiles')
    done.wait('pi.files')
    for _, it in ipairs(vim.fn.getqflist()) do
      if vim.api.nvim_buf_get_name(it.bufnr) == file and it.text:find('deleted', 1, true) then
        return it
      end
    end
    vim.wait(500)
  end, ':PiFiles to mark notes.txt deleted')
  T.eq('read [stale: deleted]', item.text, 'quickfix item of the deleted file')
  local gone = T.wait(20000, function()
    local list = require('pi_lsp').stale()
    return list[1] and list[1].reason == 'deleted' and list[1]
  end, "stale() to say notes.txt was deleted")
  T.eq(nil, gone.modifiedAt, 'no modifiedAt for a deleted file')
  T.info('statusline: %s', require('pi_lsp').statusline())
  vim.cmd('PiContextInfo')
  T.info('context session %s', done.wait('pi.context').result.session)
  T.info('%s', table.concat(order, '\n'))
end)
