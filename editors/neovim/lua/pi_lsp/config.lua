--- Options, the server command, and where Pi keeps its sessions.
---
--- Pi stores the sessions of a project in
--- `<agent dir>/sessions/--<cwd without its leading / and with / \ : as ->--/`,
--- the agent dir being `$PI_CODING_AGENT_DIR` or `~/.pi/agent`. The client
--- attaches to a buffer when one of the buffer's parent directories (or the
--- working directory, for buffers without a file) has such a folder.
local M = {}

local uv = vim.uv or vim.loop

M.name = 'pi_lsp'

---@class pi_lsp.Options
M.defaults = {
  --- Server command; nil: the repository's bin/pi-lsp (`make build`), else `pi-lsp serve` from $PATH.
  cmd = nil,
  --- Sent as `initializationOptions` (session, summarizer, baseUrl, model, provider,
  --- apiKeyEnv, drafts, clearToolOutput, contextWindow, reserveTokens, keepRecentTokens).
  --- `drafts = true` turns background drafts on (off by default). `clearToolOutput = true`
  --- makes a threshold compaction of a session the server hosts clear old tool output
  --- first (as :PiClearToolOutput), and summarize only when the context is still above
  --- the threshold (off by default). The ones of M.user_level belong in
  --- your own config, never in a project's .nvim.lua or exrc.
  init_options = {},
  --- Extra environment for the server process (e.g. PI_CODING_AGENT_DIR).
  cmd_env = nil,
  --- Other vim.lsp.ClientConfig fields for the client (e.g. detached, flags).
  client = {},
  --- Project root markers; used when `require_sessions` is false, or to find a
  --- root for a buffer of a project whose sessions folder does not exist yet.
  root_markers = { '.pi', '.git', '.hg', '.jj' },
  --- Attach only where Pi has sessions for the workspace (or one of its parents).
  require_sessions = true,
  --- Pi's agent directory; nil: $PI_CODING_AGENT_DIR or ~/.pi/agent.
  agent_dir = nil,
  --- Start the client automatically (setup(): vim.lsp.enable on 0.11+, autocmds on 0.10).
  autostart = true,
  --- Notify about finished commands and compactions the server reports.
  notify = true,
  tree = {
    --- 'float', 'split', 'vsplit' or 'tab'.
    layout = 'float',
    width = 0.8,
    height = 0.8,
    border = 'rounded',
  },
  files = {
    --- Open the quickfix window after :PiFiles.
    open = true,
  },
  context = {
    layout = 'split',
  },
  edit = {
    --- Window of the summary buffers of :PiPreview and "Summarize and edit…":
    --- 'split', 'vsplit' or 'tab'.
    layout = 'split',
    --- Key of a compaction preview that keeps an entity the summary misses: pins its
    --- message, or adds it to the instructions, and previews again.
    keep_key = 'gK',
  },
  --- Notify when files the agent read change on disk (pi/fileOps `stale`).
  stale_notify = true,
}

M.options = vim.deepcopy(M.defaults)

--- The options that pick the program that is run, the model endpoint, the key variable, or
--- whether a conversation is sent to a model on its own (drafts). They belong in the user's
--- own config: setup() called from a project-local config (a file 'exrc' sources: .nvim.lua,
--- .nvimrc, .exrc) ignores them and keeps the user's values.
M.user_level = {
  options = { 'cmd', 'cmd_env' },
  client = { 'cmd', 'cmd_env' },
  init_options = { 'summarizer', 'baseUrl', 'model', 'provider', 'apiKeyEnv', 'drafts' },
}

local exrc_names = { ['.nvim.lua'] = true, ['.nvimrc'] = true, ['.exrc'] = true }

--- The project-local config file that is calling (.nvim.lua, .nvimrc or .exrc): a Lua
--- file of that name on the call stack, or the script being sourced (`:lua` in a
--- Vimscript exrc); nil otherwise.
---@return string?
function M.project_local_caller()
  local level = 2
  while true do
    local info = debug.getinfo(level, 'S')
    if not info then
      break
    end
    local src = info.source or ''
    if src:sub(1, 1) == '@' and exrc_names[vim.fs.basename(src:sub(2))] then
      return src:sub(2)
    end
    level = level + 1
  end
  local ok, script = pcall(vim.fn.expand, '<script>')
  if ok and type(script) == 'string' and script ~= '' and exrc_names[vim.fs.basename(script)] then
    return script
  end
  return nil
end

--- opts without the options of M.user_level, with those of `keep` (the options in force)
--- instead; and the names of the ones dropped.
---@param opts table
---@param keep table
---@return table, string[]
function M.without_user_level(opts, keep)
  local out = vim.deepcopy(opts)
  local dropped = {}
  local function strip(t, names, prefix, from)
    if type(t) ~= 'table' then
      return
    end
    for _, k in ipairs(names) do
      if t[k] ~= nil then
        table.insert(dropped, prefix .. k)
      end
      t[k] = type(from) == 'table' and vim.deepcopy(from[k]) or nil
    end
  end
  out.init_options = type(out.init_options) == 'table' and out.init_options or {}
  out.client = type(out.client) == 'table' and out.client or {}
  strip(out, M.user_level.options, '', keep)
  strip(out.init_options, M.user_level.init_options, 'init_options.', keep.init_options)
  strip(out.client, M.user_level.client, 'client.', keep.client)
  strip(out.client.init_options, M.user_level.init_options, 'client.init_options.', nil)
  return out, dropped
end

---@param opts? table
function M.set(opts)
  opts = opts or {}
  local from = M.project_local_caller()
  if from then
    local dropped
    opts, dropped = M.without_user_level(opts, M.options)
    if #dropped > 0 then
      vim.notify(
        ('pi-lsp: %s ignored: %s is a project-local config; set them in your own config (:help pi_lsp-user-level)'):format(
          table.concat(dropped, ', '),
          from
        ),
        vim.log.levels.WARN
      )
    end
  end
  M.options = vim.tbl_deep_extend('force', vim.deepcopy(M.defaults), opts)
  return M.options
end

--- The editors/neovim directory (this file is editors/neovim/lua/pi_lsp/config.lua),
--- with symlinks resolved: a pack/*/start/pi_lsp link to a checkout's editors/neovim
--- is that checkout's directory.
function M.plugin_root()
  local src = debug.getinfo(1, 'S').source
  src = src:sub(1, 1) == '@' and src:sub(2) or src
  src = vim.fn.fnamemodify(src, ':p')
  src = vim.fs.normalize(uv.fs_realpath(src) or src)
  return vim.fs.dirname(vim.fs.dirname(vim.fs.dirname(src)))
end

--- bin/pi-lsp of the repository this plugin directory belongs to (a checkout built
--- with `make build`, lazy.nvim's `build` step), the binary of this plugin's own
--- version; failing that, `pi-lsp serve` from $PATH.
---@return string[]
function M.default_cmd()
  local repo = vim.fs.dirname(vim.fs.dirname(M.plugin_root()))
  local bin = repo .. '/bin/pi-lsp'
  if vim.fn.executable(bin) == 1 then
    return { bin, 'serve' }
  end
  return { 'pi-lsp', 'serve' }
end

--- The command the client uses (or would use): setup({cmd}), vim.lsp.config, or the default.
---@return string[]
function M.cmd()
  if M.options.cmd then
    return M.options.cmd
  end
  if vim.lsp.config then
    local ok, cfg = pcall(function()
      return vim.lsp.config[M.name]
    end)
    if ok and type(cfg) == 'table' and type(cfg.cmd) == 'table' then
      return cfg.cmd
    end
  end
  return M.default_cmd()
end

local function expand_home(p)
  if p == '~' or p:sub(1, 2) == '~/' then
    local home = os.getenv('HOME') or uv.os_homedir()
    return home .. p:sub(2)
  end
  return p
end

--- Pi's agent directory.
function M.agent_dir()
  local env = M.options.agent_dir
  if not env then
    local cmd_env = M.options.cmd_env
    env = (cmd_env and cmd_env.PI_CODING_AGENT_DIR) or os.getenv('PI_CODING_AGENT_DIR')
  end
  if env and env ~= '' then
    return vim.fs.normalize(expand_home(env))
  end
  local home = os.getenv('HOME') or uv.os_homedir()
  return vim.fs.normalize(home .. '/.pi/agent')
end

function M.sessions_root()
  return M.agent_dir() .. '/sessions'
end

--- Pi's encoding of a working directory into a folder name.
---@param cwd string
function M.encode_cwd(cwd)
  local s = cwd:gsub('^[/\\]', '')
  s = s:gsub('[/\\:]', '-')
  return '--' .. s .. '--'
end

--- The folder where Pi keeps the sessions started in `cwd`.
function M.sessions_dir(cwd)
  return M.sessions_root() .. '/' .. M.encode_cwd(cwd)
end

--- Number of .jsonl files in a folder (0 when it does not exist).
function M.count_sessions(dir)
  local handle = uv.fs_scandir(dir)
  if not handle then
    return 0
  end
  local n = 0
  while true do
    local name, typ = uv.fs_scandir_next(handle)
    if not name then
      break
    end
    if name:sub(-6) == '.jsonl' and (typ == 'file' or typ == 'link' or typ == nil) then
      n = n + 1
    end
  end
  return n
end

--- True when Pi has at least one session for `dir` (as given, or its real path).
function M.has_sessions(dir)
  if M.count_sessions(M.sessions_dir(dir)) > 0 then
    return true
  end
  local real = uv.fs_realpath(dir)
  return real ~= nil and real ~= dir and M.count_sessions(M.sessions_dir(real)) > 0
end

--- The `cwd` of a Pi session file's header when `path` is one, else nil.
---@param path string
function M.session_file_cwd(path)
  if path == '' or path:sub(-6) ~= '.jsonl' then
    return nil
  end
  local f = io.open(path, 'r')
  if not f then
    return nil
  end
  local line = f:read('*l')
  f:close()
  if not line then
    return nil
  end
  local ok, header = pcall(vim.json.decode, line)
  if ok and type(header) == 'table' and header.type == 'session' and type(header.cwd) == 'string' then
    return header.cwd
  end
  return nil
end

local function buf_path(bufnr)
  local name = vim.api.nvim_buf_get_name(bufnr)
  if name == '' or vim.bo[bufnr].buftype ~= '' or name:match('^%a[%w+.-]*://') then
    return nil
  end
  return vim.fs.normalize(vim.fn.fnamemodify(name, ':p'))
end

local function root_markers()
  local markers = M.options.root_markers
  if vim.lsp.config then
    local ok, cfg = pcall(function()
      return vim.lsp.config[M.name]
    end)
    if ok and type(cfg) == 'table' and type(cfg.root_markers) == 'table' then
      markers = cfg.root_markers
    end
  end
  return markers
end

--- The workspace folder for a buffer, or nil when the buffer belongs to no
--- workspace with Pi sessions (and `require_sessions` is set).
---   1. a Pi session file: the `cwd` of its header;
---   2. the nearest parent of the buffer's file (or the working directory) that has sessions;
---   3. with `require_sessions = false`: the root found by `root_markers`, else the working directory.
---@param bufnr integer
---@return string?
function M.find_root(bufnr)
  if bufnr == 0 then
    bufnr = vim.api.nvim_get_current_buf()
  end
  local path = buf_path(bufnr)
  if path then
    local cwd = M.session_file_cwd(path)
    if cwd and vim.startswith(path, M.sessions_root() .. '/') then
      return cwd
    end
  end
  local start = path and vim.fs.dirname(path) or vim.fs.normalize(vim.fn.getcwd())
  local dir = start
  while dir and dir ~= '' do
    if M.has_sessions(dir) then
      return dir
    end
    local parent = vim.fs.dirname(dir)
    if not parent or parent == dir then
      break
    end
    dir = parent
  end
  if M.options.require_sessions then
    return nil
  end
  local markers = root_markers()
  local root = path and #markers > 0 and vim.fs.root(path, markers) or nil
  return root or vim.fs.normalize(vim.fn.getcwd())
end

--- Client capabilities: Neovim's defaults (work-done progress included).
function M.capabilities()
  local caps = vim.lsp.protocol.make_client_capabilities()
  caps.window = caps.window or {}
  caps.window.workDoneProgress = true
  return caps
end

--- The full client config for vim.lsp.start on a given root (Neovim 0.10, and
--- for starting a client on demand from a command).
---@param root string
function M.client_config(root)
  local base
  if vim.lsp.config then
    local ok, cfg = pcall(function()
      return vim.lsp.config[M.name]
    end)
    base = ok and cfg and vim.deepcopy(cfg) or nil
  end
  if not base then
    base = vim.deepcopy(require('pi_lsp.lspconfig').get())
    if M.options.cmd then
      base.cmd = M.options.cmd
    end
    if M.options.cmd_env then
      base.cmd_env = M.options.cmd_env
    end
    base.init_options = vim.tbl_deep_extend('force', base.init_options or {}, M.options.init_options or {})
    base = vim.tbl_deep_extend('force', base, M.options.client or {})
  end
  base.name = M.name
  base.root_dir = root
  base.workspace_folders = {
    { uri = vim.uri_from_fname(root), name = root },
  }
  return base
end

return M
