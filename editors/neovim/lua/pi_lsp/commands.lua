--- The :Pi* user commands and the server commands behind them.
---
--- Every command runs asynchronously; when the server answers, the result is
--- shown and a `User PiCommandDone` autocmd fires with
--- `data = {command, arguments, result, error, client_id}`.
local M = {}

local ui = require('pi_lsp.ui')

--- Server command id -> Neovim user command, from the server's command table
--- (pi_lsp/protocol.lua is generated from it; test/nvim/test_commands.lua checks it).
M.server_commands = {}
for _, c in ipairs(require('pi_lsp.protocol').commands) do
  M.server_commands[c.id] = c.neovim
end

local function emit_done(data)
  pcall(vim.api.nvim_exec_autocmds, 'User', { pattern = 'PiCommandDone', modeline = false, data = data })
end

local function err_table(msg)
  return { code = -32803, message = msg, data = { kind = 'client' } }
end

--- Runs server command `id` on the buffer's client (started when needed).
---@param id string
---@param args? table
---@param cb? fun(err?: table, result?: any, client?: vim.lsp.Client)
---@param client_id? integer use this client
function M.run(id, args, cb, client_id)
  local c = require('pi_lsp.client')
  local bufnr = vim.api.nvim_get_current_buf()
  local function finish(err, result, client)
    local ok, e = true, nil
    if cb then
      ok, e = pcall(cb, err, result, client)
    end
    emit_done({ command = id, arguments = args, result = result, error = err, client_id = client and client.id })
    if not ok then
      error(e)
    end
  end
  local function go(client)
    c.exec(client, id, args, function(err, result)
      finish(err, result, client)
    end, bufnr)
  end
  if client_id then
    local client = vim.lsp.get_client_by_id(client_id)
    if client then
      return go(client)
    end
  end
  c.ensure(bufnr, function(client, msg)
    if not client then
      ui.notify(msg, vim.log.levels.ERROR)
      return finish(err_table(msg), nil, nil)
    end
    go(client)
  end)
end

local function report_error(what, err)
  local c = require('pi_lsp.client')
  local kind = c.error_kind(err)
  if kind == 'cancelled' then
    ui.notify(what .. ': cancelled, nothing was written', vim.log.levels.WARN)
    return
  end
  local level = kind == 'nothingToCompact' and vim.log.levels.INFO or vim.log.levels.ERROR
  ui.notify(what .. ': ' .. c.format_error(err), level)
end
M.report_error = report_error

local function short(id)
  return type(id) == 'string' and id or '?'
end

--- Runs server command spec.id with `args` on the buffer's client (or client_id's),
--- reports an error as "<spec.what>: <message>", shows a table result, then hands the
--- caller what the server answered. A spec holds only what differs:
---   id       the server command
---   what     the prefix of its error message
---   done     shows a table result: done(result, client, args)
---   owns_cb  done(result, client, args, cb) is called for every answer without
---            an error and calls cb itself (a picker answers later)
---@param spec {id: string, what: string, done: function, owns_cb?: boolean}
function M.send(spec, args, cb, client_id)
  M.run(spec.id, args, function(err, result, client)
    if err then
      report_error(spec.what, err)
    elseif spec.owns_cb then
      return spec.done(result, client, args, cb)
    elseif type(result) == 'table' then
      spec.done(result, client, args)
    end
    if cb then
      cb(err, result, client)
    end
  end, client_id)
end

--- Builds the function behind one server command (M.send's spec, and params: maps
--- the function's first argument to the command's arguments; without it the
--- function takes only (cb)).
---@param spec {id: string, what: string, params?: fun(x: any): table?, done: function, owns_cb?: boolean}
local function command(spec)
  if spec.params then
    return function(x, cb, client_id)
      M.send(spec, spec.params(x), cb, client_id)
    end
  end
  return function(cb)
    M.send(spec, nil, cb)
  end
end

--- Commands whose first argument is already the command's arguments table.
local function as_is(args)
  return args
end

local function refresh_session(client, session)
  local st = require('pi_lsp.handlers').get_state(client.id)
  st.session = session
  st.selected = st.session
  st.usage = nil
  require('pi_lsp.handlers').refresh_usage(client)
  for buf, b in pairs(require('pi_lsp.tree').buffers) do
    if b.client_id == client.id then
      b.session = st.session
      require('pi_lsp.tree').refresh(buf)
    end
  end
end

local function show_files(result, client)
  local root = client and client.root_dir or vim.fn.getcwd()
  if client and result.session then
    require('pi_lsp.handlers').set_stale(client.id, result.session, result.stale)
  end
  local items, nstale = M.files_items(result, root)
  local title = ('Pi files: %d modified, %d read'):format(#(result.modifiedFiles or {}), #(result.readFiles or {}))
  if nstale > 0 then
    title = title .. (', %d stale'):format(nstale)
  end
  vim.fn.setqflist({}, ' ', { title = title, items = items })
  if #items == 0 then
    ui.notify('no files read or modified on this branch')
    return
  end
  if nstale > 0 then
    local names = {}
    for _, it in ipairs(items) do
      if it.type == 'W' then
        names[#names + 1] = vim.fn.fnamemodify(it.filename, ':~:.')
      end
    end
    ui.notify(('%d file(s) changed on disk since the agent read them: %s'):format(nstale, table.concat(names, ', ')),
      vim.log.levels.WARN)
  end
  if require('pi_lsp.config').options.files.open then
    vim.cmd('botright copen')
  end
end

local function show_context(result, client)
  if client then
    local st = require('pi_lsp.handlers').get_state(client.id)
    st.usage = require('pi_lsp.handlers').usage_of(result)
    st.session = result.session or st.session
  end
  local copts = require('pi_lsp.config').options.context
  ui.scratch('pi://context', M.context_lines(result), {
    layout = copts.layout,
    filetype = 'markdown',
    title = 'Pi context',
    split_height = 15,
  })
end

local function pick_session(result, client, _, cb)
  local list = type(result) == 'table' and result.sessions or {}
  if #list == 0 then
    ui.notify('no Pi sessions for this workspace')
    if cb then
      cb(nil, nil, client)
    end
    return
  end
  vim.ui.select(list, {
    prompt = 'Pi session:',
    kind = 'pi_lsp.session',
    format_item = function(s)
      return M.format_session(s, result.current)
    end,
  }, function(choice)
    if not choice then
      if cb then
        cb(nil, nil, client)
      end
      return
    end
    M.select_session(choice.path, cb)
  end)
end

M.EDIT_ACTIONS = { 'omit', 'replace', 'restore' }

local EDIT_VERBS = { omit = 'hidden from', replace = 'replaced in', restore = 'restored to' }

--- The server commands, one entry each (see command() for the fields).
local specs = {
  -- :PiCompact [instructions]
  compact = {
    id = 'pi.compact',
    what = 'compact',
    params = function(instructions)
      local args = {}
      if instructions and vim.trim(instructions) ~= '' then
        args.instructions = vim.trim(instructions)
      end
      return args
    end,
    done = function(result)
      if result.nothingToCompact then
        ui.notify('nothing to compact: ' .. tostring(result.reason or ''))
        return
      end
      local entry = result.entry or {}
      ui.notify(('compacted%s (entry %s): %s → %s tokens'):format(
        result.via == 'pi' and ' by the live pi' or '',
        short(entry.id),
        ui.human(result.tokensBefore or entry.tokensBefore),
        ui.human(result.tokensAfter)
      ))
    end,
  },

  -- :PiNavigate {id} [none|summarize [instructions]|edit [instructions]];
  -- args {targetId, summarize?, instructions?, label?, session?}
  navigate = {
    id = 'pi.navigate',
    what = 'navigate',
    params = as_is,
    done = function(result)
      local msg = ('now at %s'):format(short(result.leafId))
      if type(result.summaryEntry) == 'table' then
        msg = msg .. (' (branch summary %s)'):format(short(result.summaryEntry.id))
      end
      if type(result.editorText) == 'string' and result.editorText ~= '' then
        msg = msg .. '; message to edit: ' .. result.editorText:gsub('\n', ' ')
      end
      ui.notify(msg)
    end,
  },

  -- :PiUndoCompaction
  undo_compaction = {
    id = 'pi.undoCompaction',
    what = 'undo compaction',
    done = function(result)
      ui.notify(('compaction %s undone; now at %s'):format(short(result.compactionId), short(result.leafId)))
    end,
  },

  -- :PiLabel {id} [text]; args {entryId, label?, session?}
  label = {
    id = 'pi.label',
    what = 'label',
    params = function(args)
      if args.label == '' then
        args.label = nil
      end
      return args
    end,
    done = function(result)
      if result.label and result.label ~= '' then
        ui.notify(('labelled %s "%s"'):format(short(result.entryId), result.label))
      else
        ui.notify(('label of %s cleared'):format(short(result.entryId)))
      end
    end,
  },

  -- :PiPin {id} [off]; args {entryId, pinned?, session?}
  pin = {
    id = 'pi.pin',
    what = 'pin',
    params = as_is,
    done = function(result)
      ui.notify(('%s %s'):format(result.pinned and 'pinned' or 'unpinned', short(result.entryId)))
    end,
  },

  -- :PiEditContext {id} omit|replace {text}|restore; args {entryId, action, text?, session?}
  edit_context = {
    id = 'pi.editContext',
    what = 'edit context',
    params = as_is,
    done = function(result, _, args)
      local verb = EDIT_VERBS[args.action] or 'edited in'
      ui.notify(('%s %s the context: %s → %s tokens'):format(
        short(args.entryId), verb, ui.human(result.tokensBefore), ui.human(result.tokensAfter)))
    end,
  },

  -- :PiFiles
  files = { id = 'pi.files', what = 'files', done = show_files },

  -- :PiContext
  context = { id = 'pi.context', what = 'context', done = show_context },

  -- :PiSelectSession [path]
  select_session = {
    id = 'pi.selectSession',
    what = 'select session',
    params = function(path)
      return { path = vim.fs.normalize(vim.fn.fnamemodify(path, ':p')) }
    end,
    done = function(result, client, args)
      if client then
        refresh_session(client, result.session or args.path)
      end
      ui.notify('session ' .. vim.fn.fnamemodify(result.session or args.path, ':t'))
    end,
  },

  -- :PiSessions
  sessions = { id = 'pi.sessions', what = 'sessions', owns_cb = true, done = pick_session },
}

for name, spec in pairs(specs) do
  M[name] = command(spec)
end

-- :PiPreview [instructions], :PiCompact! [instructions] ---------------------------

--- Previews a compaction and opens its summary for editing (`:w` commits).
function M.preview(instructions, cb)
  require('pi_lsp.edit').preview_compaction(instructions, cb)
end

-- :PiClearToolOutput [restore] ---------------------------------------------------------

--- The cleared results of a pi/clearToolOutput answer (an empty list when it has none).
local function cleared_of(result)
  return type(result.cleared) == 'table' and result.cleared or {}
end

--- One line of a clear's preview: "bash {"command":"ls"}: 1.5k → 40 tokens".
function M.cleared_line(c)
  local args = ui.one_line(c.arguments, 60)
  return ('%s%s: %s → %s tokens'):format(
    tostring(c.toolName or '?'),
    args ~= '' and (' ' .. args) or '',
    ui.human(c.tokens),
    ui.human(c.tokensAfter)
  )
end

--- The question :PiClearToolOutput asks about a dry run's result.
function M.clear_prompt(result)
  local cleared = cleared_of(result)
  local lines = {
    ('Clear %d old tool result%s? Saves ~%s tokens: context ~%s → ~%s (nothing is deleted; :PiClearToolOutput restore brings them back)'):format(
      #cleared,
      #cleared == 1 and '' or 's',
      ui.human(result.saved),
      ui.human(result.tokensBefore),
      ui.human(result.tokensAfter)
    ),
  }
  for _, c in ipairs(cleared) do
    lines[#lines + 1] = '  ' .. M.cleared_line(c)
  end
  return table.concat(lines, '\n')
end

M.CLEAR_CHOICES = { 'Clear them', 'Keep them' }

--- :PiClearToolOutput: previews which old tool results a clear replaces (`dryRun`),
--- asks (vim.ui.select, kind "pi_lsp.clear_tool_output"), then clears them; with
--- `opts.restore`, brings every cleared result back. cb(err, result, client) gets the
--- answer of the write, or (nil, nil) when nothing was written (nothing to clear, or
--- the question was answered no).
---@param opts? {restore?: boolean, session?: string, keepRecentTokens?: integer, minTokens?: integer, force?: boolean}
---@param cb? fun(err?: table, result?: table, client?: vim.lsp.Client)
---@param client_id? integer
function M.clear_tool_output(opts, cb, client_id)
  opts = opts or {}
  local function finish(err, result, client)
    if cb then
      cb(err, result, client)
    end
  end
  -- What a written clear or restore did: its error, `none` when it changed no tool
  -- result, else figures(n) of the n it changed.
  local function report_written(action, err, result, none, figures)
    if err then
      report_error(action, err)
    elseif type(result) == 'table' then
      local n = #cleared_of(result)
      ui.notify(n == 0 and none or figures(n))
    end
  end
  local base = { session = opts.session, force = opts.force }
  if opts.restore then
    local args = vim.tbl_extend('force', base, { restore = true })
    return M.run('pi.clearToolOutput', args, function(err, result, client)
      report_written('restore tool output', err, result, 'no cleared tool output to restore', function(n)
        return ('restored %d tool result%s (~%s tokens back): context ~%s → ~%s'):format(
          n, n == 1 and '' or 's', ui.human(-(tonumber(result.saved) or 0)),
          ui.human(result.tokensBefore), ui.human(result.tokensAfter))
      end)
      finish(err, result, client)
    end, client_id)
  end
  local preview = vim.tbl_extend('force', base, {
    dryRun = true,
    keepRecentTokens = opts.keepRecentTokens,
    minTokens = opts.minTokens,
  })
  M.run('pi.clearToolOutput', preview, function(err, result, client)
    if err then
      report_error('clear tool output', err)
      return finish(err, nil, client)
    end
    if type(result) ~= 'table' then
      return finish(nil, nil, client)
    end
    if #cleared_of(result) == 0 then
      ui.notify('no old tool output to clear (every tool result is recent, small or already cleared)')
      return finish(nil, nil, client)
    end
    vim.ui.select(M.CLEAR_CHOICES, {
      prompt = M.clear_prompt(result),
      kind = 'pi_lsp.clear_tool_output',
    }, function(_, idx)
      if idx ~= 1 then
        ui.notify('nothing cleared')
        return finish(nil, nil, client)
      end
      local args = vim.tbl_extend('force', base, {
        session = base.session or result.session,
        keepRecentTokens = opts.keepRecentTokens,
        minTokens = opts.minTokens,
      })
      M.run('pi.clearToolOutput', args, function(err2, res2, client2)
        report_written('clear tool output', err2, res2, 'no old tool output to clear any more; nothing written', function(n)
          return ('cleared %d old tool result%s: ~%s tokens saved, context ~%s → ~%s (:PiClearToolOutput restore brings them back)'):format(
            n, n == 1 and '' or 's', ui.human(res2.saved), ui.human(res2.tokensBefore), ui.human(res2.tokensAfter))
        end)
        finish(err2, res2, client2)
      end, client and client.id)
    end)
  end, client_id)
end

-- :PiContext --------------------------------------------------------------------------

function M.context_picture(cb)
  require('pi_lsp.context_picture').open(nil, cb)
end

-- :PiContextBySize --------------------------------------------------------------------

function M.context_by_size(cb)
  require('pi_lsp.context_size').open(nil, cb)
end

-- :PiTree [float|split|vsplit|tab] ---------------------------------------------------

function M.tree(layout, cb)
  local c = require('pi_lsp.client')
  c.ensure(0, function(client, msg)
    if not client then
      ui.notify(msg, vim.log.levels.ERROR)
      emit_done({ command = 'pi.tree', error = err_table(msg) })
      if cb then
        cb(err_table(msg))
      end
      return
    end
    require('pi_lsp.tree').open(client, { layout = layout }, function(err, buf)
      emit_done({ command = 'pi.tree', result = buf and require('pi_lsp.tree').buffers[buf].result, error = err, client_id = client.id, bufnr = buf })
      if cb then
        cb(err, buf, client)
      end
    end)
  end)
end

-- Pure helpers of :PiFiles, :PiContext and :PiSessions (test/nvim/test_unit.lua) ----------

--- "modified since read" / "deleted" for a stale file's reason.
function M.stale_reason(reason)
  if reason == 'modified' then
    return 'modified since read'
  end
  return tostring(reason or 'changed')
end

--- The quickfix items for a pi.files result: modified files first, then read
--- files; files changed on disk since the agent read them (`stale`) are marked
--- "[stale: ...]" with type W. Relative paths are taken from `root`.
---@return table[] items, integer stale count
function M.files_items(result, root)
  local function abs(name)
    if not name:match('^/') and not name:match('^%a:[/\\]') and not name:match('^~') then
      name = root .. '/' .. name
    end
    return vim.fs.normalize(name)
  end
  local stale = {}
  local stale_order = {}
  for _, s in ipairs(type(result.stale) == 'table' and result.stale or {}) do
    if type(s) == 'table' and type(s.path) == 'string' then
      local key = abs(s.path)
      if not stale[key] then
        stale_order[#stale_order + 1] = key
      end
      stale[key] = s
    end
  end
  local items, seen, nstale = {}, {}, 0
  local function add(name, what)
    local file = abs(name)
    local item = { filename = file, lnum = 1, col = 1, text = what, valid = 1 }
    local s = stale[file]
    if s then
      item.text = ('%s [stale: %s]'):format(what, M.stale_reason(s.reason))
      item.type = 'W'
      if not seen[file] then
        nstale = nstale + 1
      end
    end
    seen[file] = true
    items[#items + 1] = item
  end
  for _, f in ipairs(result.modifiedFiles or {}) do
    add(f, 'modified')
  end
  for _, f in ipairs(result.readFiles or {}) do
    add(f, 'read')
  end
  -- Stale files in neither list (the agent read them, then they changed).
  for _, key in ipairs(stale_order) do
    if not seen[key] then
      add(stale[key].path, 'read')
    end
  end
  return items, nstale
end

--- The lines :PiContext shows for a pi.context result.
function M.context_lines(result)
  local lines = { '# Pi context', '' }
  local function add(s)
    lines[#lines + 1] = s
  end
  add(('- Session: `%s`'):format(result.session or '?'))
  add(('- Leaf: `%s`'):format(result.leafId or '-'))
  add(('- Messages: %s'):format(tostring(result.messageCount or '?')))
  if result.tokens then
    local pct = tonumber(result.percent)
    add(('- Context: %s of %s tokens%s'):format(
      ui.human(result.tokens),
      ui.human(result.contextWindow),
      pct and (' (%.1f%%)'):format(pct) or ''
    ))
  end
  local lc = result.lastCompaction
  add('')
  if type(lc) == 'table' then
    add(('## Last compaction `%s` (%s tokens before)'):format(lc.id or '?', ui.human(lc.tokensBefore)))
    add('')
    vim.list_extend(lines, ui.lines(lc.summary))
  else
    add('No compaction on this branch.')
  end
  return lines
end

--- One line for a session in the picker.
function M.format_session(s, current)
  local title = (type(s.name) == 'string' and s.name ~= '') and s.name or (s.firstMessage or '')
  title = tostring(title):gsub('%s+', ' ')
  if vim.fn.strchars(title) > 60 then
    title = vim.fn.strcharpart(title, 0, 59) .. '…'
  end
  local when = tostring(s.modified or s.created or ''):gsub('T', ' '):gsub('%.%d+Z$', ''):gsub('Z$', '')
  return ('%s%s  (%s, %s messages)'):format(
    s.path == current and '* ' or '  ',
    title ~= '' and title or vim.fn.fnamemodify(s.path or '', ':t'),
    when,
    tostring(s.messageCount or '?')
  )
end

-- :PiCancel -------------------------------------------------------------------------------------

--- Cancels the running pi-lsp jobs (window/workDoneProgress/cancel).
--- :PiStatus — the statusline text and the summarizer a compaction of the session would
--- use ("Compact with claude-sonnet-4-5 via anthropic"), or why the session's model
--- cannot be used and the fix.
function M.status()
  local pi = require('pi_lsp')
  local lines = { pi.statusline() ~= '' and pi.statusline() or 'Pi: no session reported yet' }
  local st = pi.state()
  local u = st and st.usage
  if type(u) == 'table' and u.source == 'estimate' then
    lines[#lines + 1] = tonumber(u.tokens) and "~: Pi's estimate (no usage to rest on since the last context edit)"
      or "~: Pi's estimate, until the next reply brings usage (the session was compacted)"
  elseif type(u) == 'table' and u.source == 'usage' then
    lines[#lines + 1] = "from the last reply's usage"
  end
  local c = pi.summarizer()
  local level = vim.log.levels.INFO
  if c then
    lines[#lines + 1] = c.label or c.kind
    if c.notice then
      lines[#lines + 1] = c.notice
      level = vim.log.levels.WARN
    elseif c.credential then
      lines[#lines + 1] = 'key: ' .. c.credential
    end
  end
  ui.notify(table.concat(lines, '\n'), level)
end

function M.cancel()
  local c = require('pi_lsp.client')
  local n = 0
  for _, client in ipairs(vim.lsp.get_clients({ name = require('pi_lsp.config').name })) do
    local st = require('pi_lsp.handlers').get_state(client.id)
    for token, p in pairs(st.progress) do
      if p.cancellable ~= false then
        c.notify(client, 'window/workDoneProgress/cancel', { token = token })
        n = n + 1
      end
    end
  end
  ui.notify(n > 0 and ('cancelling %d job(s)'):format(n) or 'no running job')
end

-- Registration ------------------------------------------------------------------------------------

local function tree_ids()
  local ids = {}
  for _, b in pairs(require('pi_lsp.tree').buffers) do
    for _, node in pairs(b.nodes or {}) do
      ids[#ids + 1] = node.id
    end
  end
  table.sort(ids)
  return ids
end

local function complete_ids(arglead, cmdline)
  local nargs = #vim.split(vim.trim(cmdline), '%s+')
  if nargs > 2 or (nargs == 2 and cmdline:match('%s$')) then
    return {}
  end
  return vim.tbl_filter(function(id)
    return vim.startswith(id, arglead)
  end, tree_ids())
end

-- Completion of `{id} {word} ...` commands: the first argument an entry id, the second
-- one of words.
local function complete_id_then(words)
  return function(arglead, cmdline)
    local nargs = #vim.split(vim.trim(cmdline), '%s+')
    if nargs == 2 and cmdline:match('%s$') or nargs == 3 and not cmdline:match('%s$') then
      return vim.tbl_filter(function(w)
        return vim.startswith(w, arglead)
      end, words)
    end
    return complete_ids(arglead, cmdline)
  end
end

-- The handler of a user command without arguments: M[name]() (looked up when it runs).
-- The table entries stay `PiX = { handler, opts }` (internal/rpc/commands_sync_test.go
-- finds the commands by that shape).
local function run(name)
  return function()
    M[name]()
  end
end

--- Neovim user command name -> {handler, options}.
M.user_commands = {
  PiCompact = {
    function(o)
      if o.bang then
        M.preview(o.args)
      else
        M.compact(o.args)
      end
    end,
    { nargs = '*', bang = true, desc = 'Pi: compact the session [instructions] (! previews the summary for editing)' },
  },
  PiPreview = {
    function(o)
      M.preview(o.args)
    end,
    { nargs = '*', desc = 'Pi: preview a compaction summary to edit; :w commits it [instructions]' },
  },
  PiTree = {
    function(o)
      M.tree(o.fargs[1])
    end,
    {
      nargs = '?',
      desc = 'Pi: show the session tree [float|split|vsplit|tab]',
      complete = function()
        return { 'float', 'split', 'vsplit', 'tab' }
      end,
    },
  },
  PiNavigate = {
    function(o)
      local id, mode = o.fargs[1], o.fargs[2]
      local instructions = o.args:match('^%s*%S+%s+%S+%s+(.-)%s*$')
      local function go(choice)
        if choice.edit then
          require('pi_lsp.edit').preview_branch({ targetId = id, instructions = choice.instructions })
          return
        end
        M.navigate(vim.tbl_extend('force', { targetId = id }, choice))
      end
      if mode == nil then
        require('pi_lsp.tree').navigate_choice(id, go)
      elseif mode == 'none' then
        go({ summarize = false })
      elseif mode == 'summarize' or mode == 'edit' then
        go({ summarize = true, edit = mode == 'edit' or nil, instructions = instructions ~= '' and instructions or nil })
      else
        ui.notify('usage: :PiNavigate {id} [none|summarize [instructions]|edit [instructions]]', vim.log.levels.ERROR)
      end
    end,
    {
      nargs = '+',
      desc = 'Pi: navigate to an entry {id} [none|summarize [instructions]|edit [instructions]]',
      complete = complete_ids,
    },
  },
  PiUndoCompaction = { run('undo_compaction'), { nargs = 0, desc = 'Pi: undo the last compaction' } },
  PiLabel = {
    function(o)
      local text = o.args:match('^%s*%S+%s+(.-)%s*$')
      M.label({ entryId = o.fargs[1], label = text })
    end,
    { nargs = '+', desc = 'Pi: label an entry {id} [text] (no text clears)', complete = complete_ids },
  },
  PiPin = {
    function(o)
      M.pin({ entryId = o.fargs[1], pinned = o.fargs[2] ~= 'off' })
    end,
    {
      nargs = '+',
      desc = 'Pi: pin an entry {id} [off] (pinned user messages are quoted in every summary)',
      complete = complete_id_then({ 'off' }),
    },
  },
  PiFiles = { run('files'), { nargs = 0, desc = 'Pi: files read and modified, in the quickfix list' } },
  PiSessions = { run('sessions'), { nargs = 0, desc = "Pi: pick one of the workspace's sessions" } },
  PiSelectSession = {
    function(o)
      if o.args == '' then
        M.sessions()
      else
        M.select_session(o.args)
      end
    end,
    { nargs = '?', complete = 'file', desc = 'Pi: use the session file [path]' },
  },
  PiContextInfo = { run('context'), { nargs = 0, desc = 'Pi: context usage and the last summary' } },
  PiContext = { run('context_picture'), { nargs = 0, desc = 'Pi: the context at a glance (by kind, largest entries, size over the path)' } },
  PiStatus = {
    function()
      M.status()
    end,
    { nargs = 0, desc = 'Pi: context usage and the summarizer a compaction would use' },
  },
  PiEditContext = {
    function(o)
      local id, action = o.fargs[1], o.fargs[2]
      local text = o.args:match('^%s*%S+%s+%S+%s+(.-)%s*$')
      if action == 'hide' then
        action = 'omit'
      end
      if not vim.tbl_contains(M.EDIT_ACTIONS, action or '') or (action == 'replace' and text == nil) then
        ui.notify('usage: :PiEditContext {id} omit|replace {text}|restore', vim.log.levels.ERROR)
        return
      end
      M.edit_context({ entryId = id, action = action, text = action == 'replace' and text or nil })
    end,
    {
      nargs = '+',
      desc = 'Pi: hide (omit), replace or restore a message in the LLM context {id} omit|replace {text}|restore',
      complete = complete_id_then(M.EDIT_ACTIONS),
    },
  },
  PiClearToolOutput = {
    function(o)
      local arg = o.fargs[1]
      if arg ~= nil and arg ~= 'restore' then
        ui.notify('usage: :PiClearToolOutput [restore]', vim.log.levels.ERROR)
        return
      end
      M.clear_tool_output({ restore = arg == 'restore' })
    end,
    {
      nargs = '?',
      desc = 'Pi: clear old tool output from the context (asks first) [restore: bring it back]',
      complete = function()
        return { 'restore' }
      end,
    },
  },
  PiRewind = {
    function(o)
      local rw = require('pi_lsp.rewind')
      if o.fargs[1] == 'undo' then
        return rw.undo({})
      end
      local mode = o.fargs[2]
      if mode ~= nil and mode ~= 'both' and mode ~= 'code' and mode ~= 'conversation' then
        ui.notify('usage: :PiRewind {id} [code|both|conversation] | :PiRewind undo', vim.log.levels.ERROR)
        return
      end
      rw.rewind({ entryId = o.fargs[1], mode = mode })
    end,
    { nargs = '+', desc = 'Pi: bring the files the agent changed after {id} back (diff buffers, conflicts in quickfix) [both] | undo', complete = complete_id_then({ 'code', 'both', 'conversation' }) },
  },
  PiCondense = {
    function(o)
      if #o.fargs ~= 2 then
        ui.notify('usage: :PiCondense {from} {to} | :PiCondense {from} restore', vim.log.levels.ERROR)
        return
      end
      if o.fargs[2] == 'restore' then
        return require('pi_lsp.rewind').condense({ fromId = o.fargs[1], restore = true })
      end
      require('pi_lsp.rewind').condense({ fromId = o.fargs[1], toId = o.fargs[2] })
    end,
    { nargs = '+', desc = 'Pi: replace the context messages {from}..{to} by a summary (asks first) | {from} restore', complete = complete_ids },
  },
  PiContextBySize = { run('context_by_size'), { nargs = 0, desc = 'Pi: the messages of the context by size, largest first (x hides, e replaces, u restores)' } },
  PiCancel = { run('cancel'), { nargs = 0, desc = 'Pi: cancel running compactions and summaries' } },
}

function M.register()
  for name, def in pairs(M.user_commands) do
    vim.api.nvim_create_user_command(name, def[1], def[2])
  end
end

--- Hides, replaces (asking for the text, the message's preview offered) or restores the
--- context message `entry_id`, as the :PiTree and context-by-size keys do.
---@param action 'omit'|'replace'|'restore'
---@param opts {session?: string, client_id?: integer, preview?: string}
---@param done fun(err?: any)
function M.edit_context_interactive(entry_id, action, opts, done)
  local function go(text)
    M.edit_context({ entryId = entry_id, action = action, text = text, session = opts.session }, done, opts.client_id)
  end
  if action ~= 'replace' then
    return go(nil)
  end
  vim.ui.input({ prompt = ('Replace %s in the context with: '):format(entry_id), default = require('pi_lsp.ui').one_line(opts.preview) }, function(text)
    if text ~= nil then
      go(text)
    end
  end)
end

return M
