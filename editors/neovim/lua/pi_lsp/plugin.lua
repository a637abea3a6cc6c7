--- What plugin/pi_lsp.lua sets up, callable from require('pi_lsp').setup() too:
--- the user commands (:PiCompact, :PiTree, ...), the highlights and the autocmds
--- that follow pi_lsp clients. A plugin manager that adds editors/neovim to the
--- runtime path after startup (lazy.nvim from `config`) never sources plugin/;
--- setup() then does it. It runs once, whichever comes first.
local M = {}

--- The message for a server whose version (initialize's serverInfo.version) is
--- not this plugin's, or nil when they agree (or the server reports none).
---@param server_version? string
---@param plugin_version? string
---@return string?
function M.version_mismatch(server_version, plugin_version)
  plugin_version = plugin_version or require('pi_lsp.version')
  if type(server_version) ~= 'string' or server_version == '' or server_version == plugin_version then
    return nil
  end
  return ('pi-lsp %s server, Neovim plugin %s: update one of them'):format(server_version, plugin_version)
end

--- Says once (per Neovim session and pair of versions) when a pi_lsp client's
--- server is another version than this plugin. Returns the message.
---@param client vim.lsp.Client
---@return string?
function M.check_version(client)
  local msg = M.version_mismatch((client.server_info or {}).version)
  if msg then
    vim.notify_once(msg, vim.log.levels.WARN)
  end
  return msg
end

--- The client's on_init (lsp/pi_lsp.lua): keeps initialize's serverInfo, which
--- Neovim 0.10 does not store on the client, and checks the server's version.
---@param client vim.lsp.Client
---@param result? table the initialize result
function M.on_init(client, result)
  if client.server_info == nil and type(result) == 'table' and type(result.serverInfo) == 'table' then
    client.server_info = result.serverInfo
  end
  M.check_version(client)
end

local function highlights()
  local links = {
    PiTreeLeaf = 'DiagnosticOk',
    PiTreeOnPath = 'Normal',
    PiTreeOffPath = 'Comment',
    PiTreeId = 'Identifier',
    PiTreeLabel = 'Label',
    PiTreePinned = 'Special',
    PiTreeEdited = 'DiagnosticWarn',
  }
  for group, link in pairs(links) do
    vim.api.nvim_set_hl(0, group, { link = link, default = true })
  end
end

--- Defines the commands, highlights and autocmds; false on a Neovim older than 0.10.
---@return boolean
function M.load()
  if vim.g.loaded_pi_lsp then
    return true
  end
  vim.g.loaded_pi_lsp = 1

  if vim.fn.has('nvim-0.10') == 0 then
    vim.notify_once('pi_lsp needs Neovim 0.10 or newer', vim.log.levels.WARN)
    return false
  end

  require('pi_lsp.commands').register()
  highlights()

  local group = vim.api.nvim_create_augroup('pi_lsp', { clear = true })

  vim.api.nvim_create_autocmd('ColorScheme', { group = group, callback = highlights })

  -- Read-only: Neovim's $/progress handler fires LspProgress; we only watch it.
  vim.api.nvim_create_autocmd('LspProgress', {
    group = group,
    callback = function(ev)
      require('pi_lsp.handlers').on_progress(ev)
    end,
  })

  vim.api.nvim_create_autocmd('LspAttach', {
    group = group,
    callback = function(ev)
      local client = vim.lsp.get_client_by_id(ev.data.client_id)
      if not client or client.name ~= 'pi_lsp' then
        return
      end
      M.check_version(client)
      require('pi_lsp.handlers').on_attach(client, ev.buf)
      -- Opening a Pi session file selects it.
      local cfg = require('pi_lsp.config')
      local name = vim.api.nvim_buf_get_name(ev.buf)
      if name ~= '' and vim.startswith(vim.fs.normalize(name), cfg.sessions_root() .. '/')
        and cfg.session_file_cwd(name) and not vim.b[ev.buf].pi_lsp_selected then
        vim.b[ev.buf].pi_lsp_selected = true
        require('pi_lsp.client').exec(client, 'pi.selectSession', { path = vim.fs.normalize(name) }, function(err, result)
          if err then
            vim.notify('pi-lsp: ' .. require('pi_lsp.client').format_error(err), vim.log.levels.WARN)
          elseif type(result) == 'table' and result.session then
            require('pi_lsp.handlers').get_state(client.id).selected = result.session
          end
        end, ev.buf)
      end
    end,
  })
  -- A client that attached before this ran (setup() called late) is checked too.
  for _, client in ipairs(vim.lsp.get_clients({ name = 'pi_lsp' })) do
    M.check_version(client)
  end
  return true
end

return M
