-- :checkhealth pi_lsp reports the binary, its version and the sessions folder.
local T = dofile(vim.env.PI_NVIM_TESTS .. '/harness.lua')

T.run('health', function()
  T.wait_client()
  local code, out = T.system({ vim.env.PI_LSP_BIN, 'version' })
  T.eq(0, code, '`pi-lsp version` exit status')
  local version = vim.trim(out)
  T.ok(version:match('^pi%-lsp '), '`pi-lsp version` prints "pi-lsp <version>": %q', version)

  vim.cmd('checkhealth pi_lsp')
  local text = table.concat(vim.api.nvim_buf_get_lines(0, 0, -1, false), '\n')
  T.info('%s', text)
  T.ok(text:find('binary: ' .. vim.env.PI_LSP_BIN, 1, true), 'health names the binary')
  T.ok(text:find('version: ' .. version, 1, true), 'health shows the version')
  local root = vim.env.PI_CODING_AGENT_DIR .. '/sessions'
  T.ok(text:find('sessions folder: ' .. root, 1, true), 'health shows the sessions folder')
  T.ok(text:find('workspace ' .. vim.env.PI_NVIM_WORKSPACE .. ': ', 1, true), 'health shows the workspace sessions')
  T.ok(text:find('client %d+: pi%-lsp'), 'health lists the running client')
  T.ok(not text:find('ERROR'), 'health reports no error')
end)
