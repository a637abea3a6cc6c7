--- Loads lsp/pi_lsp.lua from the runtime path, for Neovim 0.10 (which has no
--- vim.lsp.config) and for starting a client on demand.
local M = {}

local cached

---@return table
function M.get()
  if cached then
    return cached
  end
  local file = vim.api.nvim_get_runtime_file('lsp/pi_lsp.lua', false)[1]
  if not file then
    local root = require('pi_lsp.config').plugin_root()
    file = root .. '/lsp/pi_lsp.lua'
  end
  cached = dofile(file)
  return cached
end

return M
