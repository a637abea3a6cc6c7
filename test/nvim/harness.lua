-- Test harness for headless Neovim end-to-end tests of the pi_lsp plugin.
--
-- A test file does:
--   local T = dofile(vim.env.PI_NVIM_TESTS .. '/harness.lua')
--   T.run('name', function() ... T.ok(...) ... end)
--
-- The body runs inside xpcall. Any error fails the test: the harness writes a
-- JSON verdict to $PI_NVIM_RESULT and leaves Neovim with `cquit 1`; a pass
-- leaves with `qall!` (exit 0). A libuv watchdog writes a FAIL verdict and
-- exits with status 3 if the body has not finished after
-- $PI_NVIM_TEST_TIMEOUT_MS, so an error or a lost reply never hangs the run
-- (scripts/test-nvim.sh also bounds the whole process with `timeout`).
local T = {}

local uv = vim.uv or vim.loop

T.name = '?'
--- Values the runner reads from the verdict (e.g. the session path to check with real Pi).
T.data = {}
T.log = {}

local result_file = vim.env.PI_NVIM_RESULT
local finished = false

-- Deprecated Neovim API used by the plugin fails the test (0.12 deprecates
-- the client.request dot forms, for instance).
T.deprecations = {}
do
  local deprecate = vim.deprecate
  vim.deprecate = function(name, alternative, version, ...)
    local tb = debug.traceback('', 2)
    if tb:find('pi_lsp', 1, true) then
      T.deprecations[#T.deprecations + 1] = ('%s (use %s): %s'):format(name, tostring(alternative), tb)
    end
    return deprecate(name, alternative, version, ...)
  end
end

local function write_verdict(status, detail)
  if not result_file or result_file == '' then
    return
  end
  local ok, text = pcall(vim.json.encode, {
    status = status,
    name = T.name,
    nvim = tostring(vim.version()),
    detail = detail,
    data = T.data,
    log = T.log,
  })
  if not ok then
    text = ('{"status":%q,"name":%q,"detail":%q}'):format(status, T.name, tostring(detail))
  end
  local f = io.open(result_file, 'w')
  if f then
    f:write(text, '\n')
    f:close()
  end
end

-- The text of a message's content: a string, or its text blocks joined.
function T.text_of(content)
  if type(content) == 'string' then
    return content
  end
  local parts = {}
  for _, b in ipairs(type(content) == 'table' and content or {}) do
    if type(b) == 'table' and b.type == 'text' then
      parts[#parts + 1] = b.text
    end
  end
  return table.concat(parts, '')
end

function T.info(fmt, ...)
  local msg = select('#', ...) > 0 and fmt:format(...) or fmt
  T.log[#T.log + 1] = msg
  io.stderr:write('[' .. T.name .. '] ' .. msg .. '\n')
end

function T.fail(msg)
  error(msg, 2)
end

function T.ok(cond, msg, ...)
  if not cond then
    error('assertion failed: ' .. (msg and msg:format(...) or '?'), 2)
  end
  return cond
end

function T.eq(want, got, what)
  if not vim.deep_equal(want, got) then
    error(('%s: want %s, got %s'):format(what or 'value', vim.inspect(want), vim.inspect(got)), 2)
  end
end

--- Waits (processing events) until `cond()` is truthy; errors after `ms`.
function T.wait(ms, cond, what)
  local value
  local ok = vim.wait(ms, function()
    value = cond()
    return value
  end, 20)
  if not ok then
    error('timed out after ' .. ms .. ' ms waiting for ' .. (what or 'a condition'), 2)
  end
  return value
end

--- The pi_lsp client attached to the current buffer, once initialized.
function T.wait_client(ms)
  return T.wait(ms or 20000, function()
    local c = vim.lsp.get_clients({ name = 'pi_lsp', bufnr = 0 })[1]
    return c and c.initialized and c or nil
  end, 'the pi_lsp client to attach to the workspace buffer and initialize')
end

--- Starts recording `User PiCommandDone` events; returns a waiter.
function T.record_done()
  local events = {}
  vim.api.nvim_create_autocmd('User', {
    pattern = 'PiCommandDone',
    callback = function(ev)
      events[#events + 1] = ev.data
    end,
  })
  local rec = { events = events }
  --- Waits for the next (unconsumed) event of `command`.
  function rec.wait(command, ms)
    rec.seen = rec.seen or {}
    return T.wait(ms or 30000, function()
      for i, e in ipairs(events) do
        if e.command == command and not rec.seen[i] then
          rec.seen[i] = true
          return e
        end
      end
    end, 'the reply to ' .. command)
  end
  --- Waits for the next event of `command` as rec.wait does, and fails the test when it
  --- carries an error (`what`, default the command, names it in the message).
  function rec.ok(command, ms, what)
    local ev = rec.wait(command, ms)
    if ev.error ~= nil then
      error(('%s failed: %s'):format(what or command, vim.inspect(ev.error)), 2)
    end
    return ev
  end
  return rec
end

--- Starts recording vim.notify calls (they still reach the original); returns the list
--- of { msg, level }, for T.noted.
function T.record_notify()
  local notes = {}
  local orig_notify = vim.notify
  vim.notify = function(msg, level, ...)
    notes[#notes + 1] = { msg = tostring(msg), level = level }
    return orig_notify(msg, level, ...)
  end
  return notes
end

--- The latest note of T.record_notify's list whose message contains `text` (plain), or nil.
function T.noted(notes, text)
  for i = #notes, 1, -1 do
    if notes[i].msg:find(text, 1, true) then
      return notes[i]
    end
  end
  return nil
end

--- Calls start(cb) and waits until cb is called; returns cb's arguments. For the plugin's
--- callback APIs (require('pi_lsp').exec, tree.open, ...).
function T.await(ms, what, start)
  local args
  start(function(...)
    args = { n = select('#', ...), ... }
  end)
  T.wait(ms, function()
    return args
  end, what)
  return unpack(args, 1, args.n)
end

--- Answers vim.ui.select with `pick`: the item equal to it (a string), the item at that
--- index (a number), or the first item for which pick(item, i) is true (a function); no
--- such item answers nil. Returns the list of the calls, each { items, prompt, lines }
--- (lines: the items through opts.format_item, when given).
function T.answer_select(pick)
  local calls = {}
  vim.ui.select = function(items, opts, on_choice)
    calls[#calls + 1] = {
      items = items,
      prompt = opts.prompt,
      lines = opts.format_item and vim.tbl_map(opts.format_item, items) or nil,
    }
    for i, it in ipairs(items) do
      if i == pick or it == pick or (type(pick) == 'function' and pick(it, i)) then
        return on_choice(it, i)
      end
    end
    on_choice(nil, nil)
  end
  return calls
end

--- The entries shown in a pi://tree buffer, in line order: { lnum, node } for every line
--- that holds one (for which pred(node) is true, when given).
function T.tree_nodes(buf, pred)
  local tree = require('pi_lsp.tree')
  local list = {}
  for lnum = 1, vim.api.nvim_buf_line_count(buf) do
    local node = tree.node_at(buf, lnum)
    if node and (pred == nil or pred(node)) then
      list[#list + 1] = { lnum = lnum, node = node }
    end
  end
  return list
end

--- In a pi://tree buffer: <CR> on line lnum, answering the navigation menu with `choice`
--- (as T.answer_select). Fails unless the menu offered the four ways to navigate; returns
--- rec's next `command` event and the menu's call.
function T.tree_enter(rec, lnum, choice, command, ms)
  local asked = T.answer_select(choice)
  vim.api.nvim_win_set_cursor(0, { lnum, 0 })
  vim.api.nvim_feedkeys(vim.keycode('<CR>'), 'x', false)
  local ev = rec.wait(command, ms or 60000)
  T.eq(1, #asked, '<CR> asked how to navigate')
  T.eq({ 'No summary', 'Summarize', 'Summarize with custom instructions', 'Summarize and edit…' }, asked[1].items,
    'navigation choices')
  return ev, asked[1]
end

--- Starts recording LspProgress events of pi_lsp clients.
function T.record_progress()
  local list = {}
  vim.api.nvim_create_autocmd('LspProgress', {
    callback = function(ev)
      local c = vim.lsp.get_client_by_id(ev.data.client_id)
      if c and c.name == 'pi_lsp' then
        local p = ev.data.params or {}
        local v = p.value or {}
        list[#list + 1] = { token = p.token, kind = v.kind, title = v.title, percentage = v.percentage, message = v.message }
      end
    end,
  })
  return list
end

--- Starts recording the plugin's `User Pi*` notification events.
---@return table<string, table[]> events by pattern
function T.record_events(patterns)
  local events = {}
  for _, pat in ipairs(patterns) do
    events[pat] = {}
    vim.api.nvim_create_autocmd('User', {
      pattern = pat,
      callback = function(ev)
        table.insert(events[pat], ev.data)
      end,
    })
  end
  return events
end

--- The progress sequence (begin ... end) for a title, once it ended.
function T.progress_for(list, title)
  local token
  for _, p in ipairs(list) do
    if p.kind == 'begin' and p.title == title then
      token = p.token
    end
  end
  if token == nil then
    return nil
  end
  local seq = {}
  for _, p in ipairs(list) do
    if p.token == token then
      seq[#seq + 1] = p
    end
  end
  if seq[#seq].kind ~= 'end' then
    return nil
  end
  return seq
end

--- The usual start of a test: the session under test (PI_NVIM_SESSION) and a recorder of
--- PiCommandDone events (T.record_done), once the client runs.
function T.start()
  local session = assert(vim.env.PI_NVIM_SESSION)
  local done = T.record_done()
  T.wait_client()
  return session, done
end

--- The entries of `entries` (T.read_session's list) that have an id, by id.
function T.by_id(entries)
  local by_id = {}
  for _, e in ipairs(entries) do
    if e.id then
      by_id[e.id] = e
    end
  end
  return by_id
end

--- The entries of a session file (header first).
function T.read_session(path)
  local entries = {}
  for line in io.lines(path) do
    if line ~= '' then
      entries[#entries + 1] = vim.json.decode(line)
    end
  end
  return entries
end

--- Checks what a :w of an edited summary wrote: `session` holds one entry more than
--- `before` (a count), the last one of type `kind` with `text` as its summary and
--- details.edited. Returns the entries and that last one.
function T.expect_edited_summary(session, before, kind, text)
  local after = T.read_session(session)
  T.eq(before + 1, #after, 'entries after :w')
  local last = after[#after]
  T.eq(kind, last.type, 'type of the last entry')
  T.eq(text, last.summary, 'the ' .. kind .. ' summary is the edited buffer text')
  T.eq(true, (last.details or {}).edited, 'details.edited')
  return after, last
end

--- Runs a command with a timeout; returns code, stdout, stderr.
function T.system(cmd, ms)
  local r = vim.system(cmd, { text = true }):wait(ms or 20000)
  return r.code, r.stdout or '', r.stderr or ''
end

local function stop_clients()
  for _, c in ipairs(vim.lsp.get_clients()) do
    pcall(function()
      if vim.fn.has('nvim-0.11') == 1 then
        c:stop()
      else
        c.stop()
      end
    end)
  end
  vim.wait(3000, function()
    return #vim.lsp.get_clients() == 0
  end, 20)
end

local function finish(status, detail)
  if finished then
    return
  end
  finished = true
  write_verdict(status, detail)
  if status == 'PASS' then
    pcall(stop_clients)
    vim.cmd('qall!')
  else
    io.stderr:write(('[%s] FAIL: %s\n'):format(T.name, tostring(detail)))
    pcall(stop_clients)
    vim.cmd('cquit 1')
  end
  os.exit(status == 'PASS' and 0 or 1)
end

--- Runs the test body; never returns.
function T.run(name, body)
  T.name = name
  local timeout = tonumber(vim.env.PI_NVIM_TEST_TIMEOUT_MS or '') or 60000
  local watchdog = uv.new_timer()
  watchdog:start(timeout, 0, function()
    if not finished then
      finished = true
      write_verdict('FAIL', ('watchdog: the test did not finish within %d ms'):format(timeout))
      io.stderr:write(('[%s] FAIL: watchdog after %d ms\n'):format(name, timeout))
      os.exit(3)
    end
  end)
  local ok, err = xpcall(function()
    body()
    if #T.deprecations > 0 then
      error('the plugin used deprecated API:\n' .. table.concat(T.deprecations, '\n'))
    end
  end, debug.traceback)
  watchdog:stop()
  if ok then
    finish('PASS')
  else
    local ok2, err2 = pcall(finish, 'FAIL', tostring(err))
    if not ok2 then
      io.stderr:write(tostring(err2) .. '\n')
      os.exit(1)
    end
  end
end

return T
