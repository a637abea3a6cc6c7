-- The init.lua of a user who installed the plugin one of docs/install.md's ways
-- ($PI_RECIPE); scripts/test-dist.sh lays the files out as each plugin manager does and
-- test_recipe.lua checks the result. Nothing here points at the repository's
-- editors/neovim directly except what the recipe itself would.
--   lazy      lazy.nvim: the repository is the plugin dir ($PI_RECIPE_PLUGIN_DIR, a link
--             to a checkout as lazy's `dir =` gives), lazy's own plugin loading (plugin/
--             of the plugin dir only), the `build` step (make build) run in it, then
--             `config`: editors/neovim appended to the runtime path and setup()
--   pack      built-in packages: pack/pi/start/pi_lsp is a symlink to editors/neovim
--             ($PI_RECIPE_SITE in 'packpath'); vim.lsp.enable on 0.11+, setup() on 0.10
--   vimpack   Neovim 0.12's vim.pack.add() of the repository ($PI_RECIPE_GIT), then
--             editors/neovim of the checkout on the runtime path and vim.lsp.enable; the
--             server is pi-lsp on PATH (the release archive's)
--   config    plain vim.lsp.config on 0.11+: editors/neovim on the runtime path,
--             vim.lsp.config('pi_lsp', {cmd = {'pi-lsp', 'serve'}}), vim.lsp.enable
--   handshake setup() with a server of another version ($PI_RECIPE_CMD)
vim.opt.swapfile = false
vim.opt.more = false

-- Every vim.notify, for the checks (set before anything can notify).
_G.pi_recipe_notes = {}
local notify = vim.notify
vim.notify = function(msg, level, ...)
  table.insert(_G.pi_recipe_notes, { msg = tostring(msg), level = level })
  return notify(msg, level, ...)
end

local recipe = assert(vim.env.PI_RECIPE, 'PI_RECIPE is not set')
local init_options = vim.json.decode(vim.env.PI_NVIM_INIT_OPTIONS or '{}')

if recipe == 'lazy' then
  -- What lazy.nvim does for { dir = ..., build = 'make build', config = function(plugin) ... end }.
  vim.go.loadplugins = false -- lazy.nvim loads plugins itself, from each plugin's dir
  local plugin = { name = 'pi-lsp', dir = assert(vim.env.PI_RECIPE_PLUGIN_DIR) }
  vim.opt.runtimepath:prepend(plugin.dir)
  for _, f in ipairs(vim.fn.glob(plugin.dir .. '/plugin/**/*.{vim,lua}', false, true)) do
    vim.cmd.source(f)
  end
  local build = vim.system({ 'make', 'build' }, { cwd = plugin.dir, text = true }):wait(600000)
  _G.pi_recipe_build = { code = build.code, out = (build.stdout or '') .. (build.stderr or '') }
  -- The recipe's config function.
  vim.opt.runtimepath:append(plugin.dir .. '/editors/neovim')
  require('pi_lsp').setup({ init_options = init_options })
elseif recipe == 'pack' then
  vim.opt.packpath:prepend(assert(vim.env.PI_RECIPE_SITE))
  if vim.fn.has('nvim-0.11') == 1 then
    vim.lsp.config('pi_lsp', { init_options = init_options })
    vim.lsp.enable('pi_lsp')
  else
    require('pi_lsp').setup({ init_options = init_options })
  end
elseif recipe == 'vimpack' then
  vim.pack.add({ { src = assert(vim.env.PI_RECIPE_GIT), name = 'pi-lsp' } }, { confirm = false })
  local dir = vim.fn.stdpath('data') .. '/site/pack/core/opt/pi-lsp'
  _G.pi_recipe_plugin_dir = dir
  vim.opt.runtimepath:append(dir .. '/editors/neovim')
  vim.lsp.config('pi_lsp', { cmd = { 'pi-lsp', 'serve' }, init_options = init_options })
  vim.lsp.enable('pi_lsp')
elseif recipe == 'config' then
  vim.opt.runtimepath:append(assert(vim.env.PI_RECIPE_RTP))
  vim.lsp.config('pi_lsp', { cmd = { 'pi-lsp', 'serve' }, init_options = init_options })
  vim.lsp.enable('pi_lsp')
elseif recipe == 'handshake' then
  vim.opt.runtimepath:append(assert(vim.env.PI_RECIPE_RTP))
  require('pi_lsp').setup({ cmd = { assert(vim.env.PI_RECIPE_CMD), 'serve' }, init_options = init_options })
else
  error('unknown PI_RECIPE ' .. recipe)
end
