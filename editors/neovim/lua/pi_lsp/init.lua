--- pi_lsp: Neovim client for pi-lsp, the language server for the Pi coding
--- agent's session files. See :help pi_lsp.
local M = {}

local config = require('pi_lsp.config')

--- Configures the plugin and starts the client automatically. It also defines
--- the :Pi* commands, highlights and autocmds (what plugin/pi_lsp.lua does), for a
--- plugin manager that adds editors/neovim to the runtime path too late for
--- plugin/ to be sourced (lazy.nvim from `config`).
---
--- Neovim 0.11+: forwards `cmd`, `cmd_env`, `init_options`, `root_markers`
--- and `client` to vim.lsp.config('pi_lsp', ...) and calls vim.lsp.enable('pi_lsp').
--- Neovim 0.10: starts the client with vim.lsp.start on the buffers of
--- workspaces that have Pi sessions.
---@param opts? pi_lsp.Options
function M.setup(opts)
  require('pi_lsp.plugin').load()
  local options = config.set(opts)
  if vim.lsp.config and vim.lsp.enable then
    local override = vim.deepcopy(options.client or {})
    if options.cmd then
      override.cmd = options.cmd
    end
    if options.cmd_env then
      override.cmd_env = options.cmd_env
    end
    if options.init_options and next(options.init_options) then
      override.init_options = options.init_options
    end
    if opts and opts.root_markers then
      override.root_markers = options.root_markers
    end
    if next(override) then
      vim.lsp.config(config.name, override)
    end
    if options.autostart then
      vim.lsp.enable(config.name)
    end
    return
  end
  local group = vim.api.nvim_create_augroup('pi_lsp.autostart', { clear = true })
  if not options.autostart then
    return
  end
  vim.api.nvim_create_autocmd({ 'BufReadPost', 'BufNewFile' }, {
    group = group,
    callback = function(ev)
      M.start(ev.buf)
    end,
  })
  for _, buf in ipairs(vim.api.nvim_list_bufs()) do
    if vim.api.nvim_buf_is_loaded(buf) then
      M.start(buf)
    end
  end
end

--- Starts (or reuses) the client for a file buffer of a workspace with Pi
--- sessions. Returns the client id, or nil when the buffer has no workspace.
---@param bufnr? integer
---@return integer?
function M.start(bufnr)
  bufnr = (bufnr == nil or bufnr == 0) and vim.api.nvim_get_current_buf() or bufnr
  if vim.bo[bufnr].buftype ~= '' or vim.api.nvim_buf_get_name(bufnr) == '' then
    return nil
  end
  local root = config.find_root(bufnr)
  if not root then
    return nil
  end
  local cfg = config.client_config(root)
  if type(cfg.cmd) == 'table' and vim.fn.executable(cfg.cmd[1]) == 0 then
    vim.notify_once(('pi-lsp: %q is not executable (see :checkhealth pi_lsp)'):format(cfg.cmd[1]), vim.log.levels.WARN)
    return nil
  end
  return vim.lsp.start(cfg, { bufnr = bufnr })
end

--- The pi_lsp client of a buffer (else any running one).
function M.client(bufnr)
  return require('pi_lsp.client').get(bufnr)
end

--- What the server last reported for the buffer's client: session, leafId,
--- usage {tokens, contextWindow, percent}, files, running progress.
function M.state(bufnr)
  local client = M.client(bufnr)
  return client and require('pi_lsp.handlers').state[client.id] or nil
end

--- The files of the current session that changed on disk since the agent
--- last read them (from the server's pi/fileOps and :PiFiles), each
--- `{path, reason = 'modified'|'deleted', readAt, modifiedAt?}`; {} when none.
---@param bufnr? integer
---@param session? string a session path instead of the current one
---@return {path: string, reason: string, readAt?: string, modifiedAt?: string}[]
function M.stale(bufnr, session)
  local st = M.state(bufnr)
  if not st then
    return {}
  end
  session = session or st.session
  return vim.deepcopy(session and st.stale and st.stale[session] or {})
end

--- The background draft of the current session when one is ready
--- (pi/draftReady): `{session, firstKeptEntryId, tokensBefore, incremental}`.
---@param bufnr? integer
function M.draft(bufnr)
  local st = M.state(bufnr)
  local d = st and st.draft
  if d and (st.session == nil or d.session == st.session) then
    return vim.deepcopy(d)
  end
  return nil
end

--- Runs a server command (`pi.compact`, ...) with one argument object.
---@param command string
---@param args? table
---@param cb? fun(err?: table, result?: any, client?: vim.lsp.Client)
function M.exec(command, args, cb)
  require('pi_lsp.commands').run(command, args, cb)
end

--- The live pi of the current session when it loaded pi-lsp's Pi extension
--- (editors/pi): `{pid, bridge = true, piVersion}`; nil otherwise. pi-lsp then
--- sends :PiCompact, :PiNavigate and :PiLabel to that pi, which writes them.
---@param bufnr? integer
function M.live(bufnr)
  local st = M.state(bufnr)
  local o = st and st.owner
  if type(o) == 'table' and o.bridge == true then
    return vim.deepcopy(o)
  end
  return nil
end

--- The summarizer a compaction of the session would use, as the server reports it:
--- { kind = 'model'|'extractive'|'openai', provider, model, thinkingLevel, label =
--- 'Compact with claude-sonnet-4-5 via anthropic', notice?, fix? } (notice and fix
--- when the session's model cannot be used and the extractive summary stands in), or nil.
---@param bufnr? integer
function M.summarizer(bufnr)
  local st = M.state(bufnr)
  local c = st and st.summarizer
  return type(c) == 'table' and vim.deepcopy(c) or nil
end

--- Context usage for a statusline, e.g. "Pi 84.2k/200.0k (42%)" ("Pi ~227/128.0k": Pi's
--- estimate, after a compaction until the next reply brings usage), followed by
--- " · live" when a running pi with pi-lsp's bridge holds the session, " · no model"
--- when the session's model cannot be used for summaries (see summarizer()),
--- " · draft ready" when a background compaction draft is ready and " · 2 stale"
--- when files the agent read changed on disk since; or the running job
--- ("Pi: Compacting session 40%"); "" without a client or data.
--- Use it as `%{v:lua.require'pi_lsp'.statusline()}` or in a statusline plugin.
---@param bufnr? integer
---@return string
function M.statusline(bufnr)
  local st = M.state(bufnr)
  if not st then
    return ''
  end
  local running
  for _, p in pairs(st.progress or {}) do
    running = p
    break
  end
  if running then
    local s = 'Pi: ' .. (running.title or 'working')
    if running.percentage then
      s = s .. (' %d%%'):format(running.percentage)
    end
    return s
  end
  if st.compacting then
    return 'Pi: compacting'
  end
  local u = st.usage
  local human = require('pi_lsp.ui').human
  local s = ''
  if type(u) == 'table' then
    local tokens, window = tonumber(u.tokens), tonumber(u.contextWindow)
    local estimate = tonumber(u.estimate)
    if not tokens and estimate then
      -- Pi has no figure after a compaction until the next reply: its estimate, marked "~".
      s = ('Pi ~%s/%s'):format(human(estimate), human(window))
    elseif not tokens then
      -- Unknown (a server without the estimate, right after a compaction).
      s = window and ('Pi ?/%s'):format(human(window)) or ''
    else
      local approx = u.source == 'estimate' and '~' or ''
      local pct = (window and window > 0) and (100 * tokens / window) or tonumber(u.percent)
      if pct then
        s = ('Pi %s%s/%s (%d%%)'):format(approx, human(tokens), human(window), math.floor(pct + 0.5))
      else
        s = ('Pi %s%s'):format(approx, human(tokens))
      end
    end
  end
  local marks = {}
  if M.live(bufnr) then
    marks[#marks + 1] = 'live'
  end
  if M.draft(bufnr) then
    marks[#marks + 1] = 'draft ready'
  end
  local sum = M.summarizer(bufnr)
  if sum and sum.notice then
    marks[#marks + 1] = 'no model'
  end
  local n = #(st.session and st.stale and st.stale[st.session] or {})
  if n > 0 then
    marks[#marks + 1] = ('%d stale'):format(n)
  end
  if #marks > 0 then
    s = (s ~= '' and s or 'Pi') .. ' · ' .. table.concat(marks, ' · ')
  end
  return s
end

return M
