--- Finding or starting the pi_lsp client, and calling the server through it
--- with the method forms each Neovim version expects (`client:request` and
--- `client:exec_cmd` on 0.11+, `client.request` on 0.10).
local M = {}

local config = require('pi_lsp.config')

local has_011 = vim.fn.has('nvim-0.11') == 1

M.has_011 = has_011

--- The pi_lsp client of a buffer, else any running pi_lsp client.
---@param bufnr? integer
---@return vim.lsp.Client?
function M.get(bufnr)
  bufnr = (bufnr == nil or bufnr == 0) and vim.api.nvim_get_current_buf() or bufnr
  local clients = vim.lsp.get_clients({ name = config.name, bufnr = bufnr })
  if clients[1] then
    return clients[1]
  end
  clients = vim.lsp.get_clients({ name = config.name })
  -- Prefer the client whose workspace holds the working directory.
  local cwd = vim.fs.normalize(vim.fn.getcwd())
  for _, c in ipairs(clients) do
    if c.root_dir and (cwd == c.root_dir or vim.startswith(cwd, c.root_dir .. '/')) then
      return c
    end
  end
  return clients[1]
end

local function when_initialized(client, cb, deadline)
  if client.initialized then
    return cb(client)
  end
  local stopped
  if has_011 then
    stopped = client:is_stopped()
  else
    stopped = client.is_stopped()
  end
  if stopped or (vim.uv or vim.loop).now() > deadline then
    return cb(nil, 'pi-lsp did not initialize')
  end
  vim.defer_fn(function()
    when_initialized(client, cb, deadline)
  end, 20)
end

--- Calls `cb(client)` with a ready client, starting one for the buffer's
--- workspace when none runs; `cb(nil, message)` when that is impossible.
---@param bufnr? integer
---@param cb fun(client?: vim.lsp.Client, err?: string)
function M.ensure(bufnr, cb)
  bufnr = (bufnr == nil or bufnr == 0) and vim.api.nvim_get_current_buf() or bufnr
  local client = M.get(bufnr)
  local deadline = (vim.uv or vim.loop).now() + 15000
  if client then
    return when_initialized(client, cb, deadline)
  end
  local root = config.find_root(bufnr)
  if not root then
    local cwd = vim.fs.normalize(vim.fn.getcwd())
    return cb(nil, ('no Pi sessions for this workspace (looked for %s)'):format(config.sessions_dir(cwd)))
  end
  local cfg = config.client_config(root)
  if type(cfg.cmd) == 'table' and vim.fn.executable(cfg.cmd[1]) == 0 then
    return cb(nil, ('server command %q is not executable (see :checkhealth pi_lsp)'):format(cfg.cmd[1]))
  end
  local is_file = vim.bo[bufnr].buftype == '' and vim.api.nvim_buf_get_name(bufnr) ~= ''
  local id
  if has_011 then
    id = vim.lsp.start(cfg, { bufnr = bufnr, attach = is_file })
  elseif is_file then
    id = vim.lsp.start(cfg, { bufnr = bufnr })
  else
    id = vim.lsp.start_client(cfg)
  end
  client = id and vim.lsp.get_client_by_id(id)
  if not client then
    return cb(nil, 'could not start pi-lsp')
  end
  when_initialized(client, cb, deadline)
end

--- A custom request (`pi/...`).
---@return boolean, integer?
function M.request(client, method, params, handler, bufnr)
  if has_011 then
    return client:request(method, params, handler, bufnr)
  end
  return client.request(method, params, handler, bufnr)
end

--- A notification to the server.
function M.notify(client, method, params)
  if has_011 then
    return client:notify(method, params)
  end
  return client.notify(method, params)
end

--- The commands the server announced in `initialize`.
---@return string[]
function M.server_commands(client)
  local caps = client.server_capabilities or {}
  local provider = caps.executeCommandProvider
  return type(provider) == 'table' and provider.commands or {}
end

--- Runs a server command (`pi.compact`, ...) with one argument object through
--- workspace/executeCommand, or through the matching `pi/...` request when the
--- server did not announce the command.
---@param client vim.lsp.Client
---@param command string
---@param args? table
---@param handler fun(err?: table, result?: any, ctx?: table)
---@param bufnr? integer
function M.exec(client, command, args, handler, bufnr)
  local arg = args
  if arg == nil or next(arg) == nil then
    arg = vim.empty_dict()
  end
  if vim.list_contains(M.server_commands(client), command) then
    local cmd = { title = command, command = command, arguments = { arg } }
    if has_011 then
      client:exec_cmd(cmd, { bufnr = bufnr }, handler)
    else
      client.request('workspace/executeCommand', { command = command, arguments = { arg } }, handler, bufnr)
    end
    return
  end
  local method = 'pi/' .. command:gsub('^pi%.', '')
  M.request(client, method, arg, handler, bufnr)
end

--- One line for a JSON-RPC error: message, and `data.kind` when given.
---@param err any
function M.format_error(err)
  if type(err) ~= 'table' then
    return tostring(err)
  end
  local msg = err.message or vim.inspect(err)
  local kind = type(err.data) == 'table' and err.data.kind or nil
  if kind and not msg:find(kind, 1, true) then
    msg = ('%s [%s]'):format(msg, kind)
  end
  return msg
end

--- The `data.kind` of a JSON-RPC error, if any.
function M.error_kind(err)
  return type(err) == 'table' and type(err.data) == 'table' and err.data.kind or nil
end

return M
