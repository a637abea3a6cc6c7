--- Handlers for the server's pi/* notifications, and the per-client state
--- they feed (current session, leaf, context usage, files, running jobs).
---
--- Every notification is also re-emitted as a `User` autocmd (PiSessionChanged,
--- PiContextUsage, PiCompactionStart, PiCompactionEnd, PiFileOps,
--- PiDraftReady, PiToolOutputCleared) whose `data` is the notification's params plus `client_id`.
---
--- `$/progress` is NOT handled here: Neovim's own handler turns it into the
--- LspProgress autocmd (which fidget.nvim and statuslines read); this module
--- only listens to LspProgress to show running jobs in the statusline.
local M = {}

---@class pi_lsp.State
---@field session? string
---@field selected? string the session chosen with pi.selectSession (the server's current one from then on)
---@field leafId? string
---@field entries? integer
---@field usage? {tokens: integer, contextWindow: integer, percent: number, estimate?: number, source?: string}
---@field files? {readFiles: string[], modifiedFiles: string[]}
---@field stale table<string, {path: string, readAt?: string, modifiedAt?: string, reason: string}[]> by session path
---@field draft? {session: string, firstKeptEntryId?: string, tokensBefore?: integer, incremental?: boolean, leafId?: string}
---@field compacting? string reason of a running compaction
---@field progress table<string|integer, {title?: string, message?: string, percentage?: number, cancellable?: boolean}>

---@type table<integer, pi_lsp.State>
M.state = {}

---@param client_id integer
---@return pi_lsp.State
function M.get_state(client_id)
  local st = M.state[client_id]
  if not st then
    st = { progress = {}, stale = {} }
    M.state[client_id] = st
  end
  return st
end

local function emit(pattern, data)
  pcall(vim.api.nvim_exec_autocmds, 'User', { pattern = pattern, modeline = false, data = data })
end

local function redraw()
  pcall(vim.cmd, 'redrawstatus!')
end

local function notify(msg, level)
  if require('pi_lsp.config').options.notify then
    vim.notify('pi-lsp: ' .. msg, level or vim.log.levels.INFO)
  end
end

local function time_or_nil(t)
  -- pi-lsp sends Go's zero time for a deleted file's modifiedAt.
  if type(t) ~= 'string' or t == '' or t:match('^0001%-01%-01') then
    return nil
  end
  return t
end

--- Records the stale files of a session (from pi/fileOps or pi.files);
--- returns the paths that became stale since the previous report of that
--- session (none on the first report: it only seeds the list).
---@return string[]
function M.set_stale(client_id, session, list)
  local st = M.get_state(client_id)
  if type(session) ~= 'string' then
    return {}
  end
  local first = st.stale[session] == nil
  local old = {}
  for _, f in ipairs(st.stale[session] or {}) do
    old[f.path] = true
  end
  local new, added = {}, {}
  for _, f in ipairs(type(list) == 'table' and list or {}) do
    if type(f) == 'table' and type(f.path) == 'string' then
      new[#new + 1] = {
        path = f.path,
        reason = f.reason,
        readAt = time_or_nil(f.readAt),
        modifiedAt = time_or_nil(f.modifiedAt),
      }
      if not old[f.path] and not first then
        added[#added + 1] = f.path
      end
    end
  end
  st.stale[session] = new
  return added
end

--- A notification about a session other than the one selected with
--- pi.selectSession (the server reports changes of every session of the
--- workspace); it does not change the current session's state.
local function foreign(st, session)
  return st.selected ~= nil and type(session) == 'string' and session ~= st.selected
end
M.foreign = foreign

local function with_client(params, ctx)
  local data = vim.deepcopy(params or {})
  if type(data) == 'table' then
    data.client_id = ctx and ctx.client_id
  end
  return data
end

-- A handler of a server notification that the User event `event` reports. params that are
-- not a table are ignored; update(st, params, ctx) brings the client's state st up to date;
-- then the event is emitted, after(what update returned, params, ctx) runs when given
-- (messages, refreshes of open buffers), and the statuslines are redrawn.
local function notification(event, update, after)
  return function(_, params, ctx)
    if type(params) ~= 'table' then
      return
    end
    local r = update(M.get_state(ctx.client_id), params, ctx)
    emit(event, with_client(params, ctx))
    if after then
      after(r, params, ctx)
    end
    redraw()
  end
end

---@type table<string, lsp.Handler>
M.handlers = {
  ['pi/sessionChanged'] = notification('PiSessionChanged', function(st, params)
    local changed = st.session ~= params.session or st.leafId ~= params.leafId
    if not foreign(st, params.session) then
      st.session, st.leafId, st.entries, st.owner = params.session, params.leafId, params.entries, params.owner
      -- The summarizer and model a compaction would use, and why a wanted model is not.
      st.summarizer = params.summarizer
    end
    -- A draft is for the span of one leaf; the server sends pi/draftReady again
    -- once it has caught up.
    if st.draft and (st.draft.session == params.session and st.draft.leafId ~= params.leafId) then
      st.draft = nil
    end
    return changed
  end, function(changed, params, ctx)
    if changed then
      require('pi_lsp.tree').on_session_changed(ctx.client_id, params)
      require('pi_lsp.context_size').on_session_changed(ctx.client_id, params)
      require('pi_lsp.context_picture').on_session_changed(ctx.client_id, params)
    end
  end),
  ['pi/contextUsage'] = notification('PiContextUsage', function(st, params)
    if not foreign(st, params.session) then
      st.usage = {
        tokens = params.tokens,
        contextWindow = params.contextWindow,
        percent = params.percent,
        estimate = params.estimate,
        source = params.source,
      }
      if params.session then
        st.session = params.session
      end
    end
  end),
  ['pi/fileOps'] = notification('PiFileOps', function(st, params, ctx)
    if not foreign(st, params.session) then
      st.files = { readFiles = params.readFiles or {}, modifiedFiles = params.modifiedFiles or {} }
    end
    if params.stale ~= nil then
      return M.set_stale(ctx.client_id, params.session, params.stale)
    end
    return {}
  end, function(added)
    if #added > 0 and require('pi_lsp.config').options.stale_notify then
      notify(('changed on disk since the agent read %s: %s (:PiFiles)'):format(
        #added == 1 and 'it' or 'them',
        table.concat(added, ', ')
      ), vim.log.levels.INFO)
    end
  end),
  ['pi/draftReady'] = notification('PiDraftReady', function(st, params)
    if foreign(st, params.session) then
      return false
    end
    local leaf = st.leafId
    if params.session ~= st.session then
      leaf = nil
    end
    st.draft = {
      session = params.session,
      firstKeptEntryId = params.firstKeptEntryId,
      tokensBefore = params.tokensBefore,
      incremental = params.incremental,
      leafId = leaf,
    }
    return true
  end, function(kept, params)
    -- Quiet: a background draft only makes the next compaction instant. An
    -- update of a draft as the session grows (incremental) says nothing.
    if kept and not params.incremental then
      notify(('compaction draft ready (%s tokens before); :PiPreview shows it at once'):format(
        require('pi_lsp.ui').human(params.tokensBefore)
      ), vim.log.levels.DEBUG)
    end
  end),
  -- With init_options.clearToolOutput, a threshold compaction of a hosted session
  -- cleared old tool output first (compacting: a compaction still follows).
  ['pi/toolOutputCleared'] = notification('PiToolOutputCleared', function() end, function(_, params)
    notify(M.tool_output_cleared_message(params))
  end),
  ['pi/compactionStart'] = notification('PiCompactionStart', function(st, params)
    st.compacting = params.reason or 'manual'
  end),
  ['pi/compactionEnd'] = notification('PiCompactionEnd', function(st, params)
    st.compacting = nil
    if st.draft and st.draft.session == params.session and not params.aborted then
      st.draft = nil
    end
  end, function(_, params)
    -- Manual compactions (:PiCompact, :w of a preview) report through the
    -- command; tell about the others (threshold/overflow compactions).
    if params.errorMessage and params.reason ~= 'manual' then
      notify('compaction failed: ' .. tostring(params.errorMessage), vim.log.levels.ERROR)
    elseif params.aborted and params.reason ~= 'manual' then
      notify(('compaction (%s) cancelled'):format(tostring(params.reason)), vim.log.levels.WARN)
    elseif params.reason and params.reason ~= 'manual' then
      notify(('session compacted (%s)'):format(params.reason))
    end
  end),
}

--- The message of a pi/toolOutputCleared notification.
function M.tool_output_cleared_message(params)
  local n = #(type(params.cleared) == 'table' and params.cleared or {})
  local msg = ('cleared %d old tool result%s (~%s tokens) instead of compacting'):format(
    n, n == 1 and '' or 's', require('pi_lsp.ui').human(params.saved))
  if params.compacting then
    msg = ('cleared %d old tool result%s (~%s tokens), then compacted'):format(
      n, n == 1 and '' or 's', require('pi_lsp.ui').human(params.saved))
  end
  return msg
end

--- Tracks work-done progress of pi_lsp clients from the LspProgress autocmd
--- (read-only; the $/progress handler stays Neovim's).
function M.on_progress(ev)
  local data = ev.data or {}
  local client = data.client_id and vim.lsp.get_client_by_id(data.client_id)
  if not client or client.name ~= require('pi_lsp.config').name then
    return
  end
  local params = data.params or data.result or {}
  local value = params.value
  if type(value) ~= 'table' or params.token == nil then
    return
  end
  local st = M.get_state(client.id)
  local key = params.token
  if value.kind == 'end' then
    st.progress[key] = nil
  else
    local p = st.progress[key] or {}
    if value.title then
      p.title = value.title
    end
    if value.cancellable ~= nil then
      p.cancellable = value.cancellable
    end
    p.message = value.message or p.message
    p.percentage = value.percentage or p.percentage
    st.progress[key] = p
  end
  redraw()
end

--- Asks the server for the context usage (seeds the statusline).
function M.refresh_usage(client, bufnr)
  local st = M.get_state(client.id)
  require('pi_lsp.client').request(client, 'pi/context', vim.empty_dict(), function(err, result)
    if err or type(result) ~= 'table' then
      return
    end
    st.session = result.session or st.session
    st.leafId = result.leafId or st.leafId
    st.usage = {
      tokens = result.tokens,
      contextWindow = result.contextWindow,
      percent = result.percent,
      estimate = result.estimate,
      source = result.source,
    }
    redraw()
  end, bufnr)
end

--- Once per client: seeds the statusline.
function M.on_attach(client, bufnr)
  local st = M.get_state(client.id)
  if st.seeded then
    return
  end
  st.seeded = true
  M.refresh_usage(client, bufnr)
end

return M
