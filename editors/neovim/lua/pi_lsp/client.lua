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

-- Neovim never calls the handler of a request whose reply is the error
-- RequestCancelled (-32800): its RPC layer takes that for the acknowledgement
-- of a $/cancelRequest. pi-lsp answers a job cancelled by
-- window/workDoneProgress/cancel (:PiCancel) that way, so the plugin tracks
-- its requests and, when the reply came (LspRequest "complete") but the
-- handler was not called, calls it with a "cancelled" error itself.
local tracked = {} ---@type table<string, fun(err: table)>
local capture ---@type {client_id: integer, method: string, id?: integer}?
local tracking_group

local function track_requests()
  if tracking_group then
    return
  end
  tracking_group = vim.api.nvim_create_augroup('pi_lsp.requests', { clear = true })
  vim.api.nvim_create_autocmd('LspRequest', {
    group = tracking_group,
    callback = function(ev)
      local d = ev.data or {}
      local r = d.request or {}
      if capture and r.type == 'pending' and d.client_id == capture.client_id and r.method == capture.method then
        capture.id = d.request_id
      elseif r.type == 'complete' then
        local key = tostring(d.client_id) .. ':' .. tostring(d.request_id)
        if tracked[key] then
          -- A normal reply's handler is already scheduled and runs first.
          vim.defer_fn(function()
            local cancel = tracked[key]
            if cancel then
              tracked[key] = nil
              cancel({ code = -32800, message = 'cancelled', data = { kind = 'cancelled' } })
            end
          end, 200)
        end
      end
    end,
  })
end

--- Sends a request (or runs `send`, which makes one) and makes sure `handler`
--- is called exactly once, also when the job is cancelled.
local function tracked_request(client, method, handler, send)
  track_requests()
  local key
  local called = false
  local function once(err, result, ctx)
    if key then
      tracked[key] = nil
    end
    if called then
      return
    end
    called = true
    handler(err, result, ctx or { client_id = client.id, method = method })
  end
  capture = { client_id = client.id, method = method }
  local ok, id = send(once)
  local cap = capture
  capture = nil
  id = id or (cap and cap.id)
  if ok ~= false and id and not called then
    key = tostring(client.id) .. ':' .. tostring(id)
    tracked[key] = function(err)
      once(err, nil, { client_id = client.id, method = method, request_id = id })
    end
  end
  return ok, id
end

--- A custom request (`pi/...`).
---@return boolean, integer?
function M.request(client, method, params, handler, bufnr)
  return tracked_request(client, method, handler, function(h)
    if has_011 then
      return client:request(method, params, h, bufnr)
    end
    return client.request(method, params, h, bufnr)
  end)
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
    tracked_request(client, 'workspace/executeCommand', handler, function(h)
      if has_011 then
        client:exec_cmd({ title = command, command = command, arguments = { arg } }, { bufnr = bufnr }, h)
        return true
      end
      return client.request('workspace/executeCommand', { command = command, arguments = { arg } }, h, bufnr)
    end)
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
