-- doc/pi_lsp.txt builds its tags and opens at every documented command.
local T = dofile(vim.env.PI_NVIM_TESTS .. '/harness.lua')

T.run('help', function()
  -- Build the tags on a copy: nothing is written into the repository.
  local dir = vim.fn.tempname()
  vim.fn.mkdir(dir .. '/doc', 'p')
  vim.fn.writefile(vim.fn.readfile(vim.env.PI_LSP_REPO .. '/editors/neovim/doc/pi_lsp.txt'), dir .. '/doc/pi_lsp.txt')
  vim.cmd('helptags ' .. vim.fn.fnameescape(dir .. '/doc'))
  vim.opt.runtimepath:prepend(dir)
  local tags = vim.fn.readfile(dir .. '/doc/tags')
  T.ok(#tags > 20, 'tags generated (%d)', #tags)
  for _, tag in ipairs({ 'pi_lsp.txt', 'pi_lsp-setup', 'pi_lsp.setup()', 'pi_lsp.statusline()', 'pi_lsp-tree', ':PiCompact', ':PiTree' }) do
    vim.cmd('help ' .. tag)
    T.eq('help', vim.bo.buftype, 'buftype after :help ' .. tag)
    T.ok(vim.api.nvim_get_current_line():find('*' .. tag .. '*', 1, true), ':help %s lands on its tag', tag)
    vim.cmd('close')
  end
end)
