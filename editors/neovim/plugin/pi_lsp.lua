-- pi_lsp: user commands (:PiCompact, :PiTree, ...), highlights and the
-- autocmds that follow pi_lsp clients. The LSP config itself is lsp/pi_lsp.lua.
if vim.g.loaded_pi_lsp then
  return
end
vim.g.loaded_pi_lsp = 1

if vim.fn.has('nvim-0.10') == 0 then
  vim.notify_once('pi_lsp needs Neovim 0.10 or newer', vim.log.levels.WARN)
  return
end

require('pi_lsp.commands').register()

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
