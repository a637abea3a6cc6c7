-- Minimal init for the headless tests: the plugin from this repository and
-- nothing from the user's configuration (the runner points the XDG dirs and
-- HOME at a temp dir). The client is configured the way a user would:
--   PI_NVIM_STYLE=config  vim.lsp.config('pi_lsp', {cmd}) + vim.lsp.enable (0.11+)
--   PI_NVIM_STYLE=setup   require('pi_lsp').setup({cmd})
local repo = assert(vim.env.PI_LSP_REPO, 'PI_LSP_REPO is not set')
vim.opt.runtimepath:prepend(repo .. '/editors/neovim')
vim.opt.swapfile = false
vim.opt.more = false

local cmd = { assert(vim.env.PI_LSP_BIN, 'PI_LSP_BIN is not set'), 'serve' }
local init_options = vim.json.decode(vim.env.PI_NVIM_INIT_OPTIONS or '{}')
if vim.tbl_isempty(init_options) then
  init_options = vim.empty_dict()
end
local style = vim.env.PI_NVIM_STYLE
if style == nil or style == '' then
  style = vim.fn.has('nvim-0.11') == 1 and 'config' or 'setup'
end

-- The server stays in Neovim's process group, so the runner's group kill reaches it.
if style == 'config' then
  vim.lsp.config('pi_lsp', { cmd = cmd, init_options = init_options, detached = false })
  vim.lsp.enable('pi_lsp')
else
  require('pi_lsp').setup({ cmd = cmd, init_options = init_options, client = { detached = false } })
end
