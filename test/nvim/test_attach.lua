-- The client starts from the configured command on workspace buffers only:
-- the root is the workspace with Pi sessions, scratch buffers and files of
-- other folders get no client. Run once per configuration style.
local T = dofile(vim.env.PI_NVIM_TESTS .. '/harness.lua')

T.run(vim.env.PI_NVIM_TEST_NAME or 'attach', function()
  local client = T.wait_client()
  T.eq(vim.env.PI_LSP_BIN, client.config.cmd[1], 'server command')
  T.eq(vim.env.PI_NVIM_WORKSPACE, client.root_dir, 'root_dir')
  if vim.fn.has('nvim-0.11') == 1 then
    T.eq('pi-lsp', (client.server_info or {}).name, 'serverInfo.name')
  end
  T.ok(client.config.filetypes == nil, 'no filetypes')
  T.ok(vim.env.PI_NVIM_STYLE ~= 'config' or vim.lsp.is_enabled and vim.lsp.is_enabled('pi_lsp') or vim.lsp._enabled_configs ~= nil,
    'vim.lsp.enable was used')

  -- A second workspace file reuses the client.
  vim.cmd('edit ' .. vim.fn.fnameescape(vim.env.PI_NVIM_WORKSPACE .. '/sub/other.md'))
  T.wait(10000, function()
    return vim.lsp.get_clients({ name = 'pi_lsp', bufnr = 0 })[1]
  end, 'the client to attach to a second workspace file')
  T.eq(1, #vim.lsp.get_clients({ name = 'pi_lsp' }), 'one client for the workspace')

  -- A file outside any workspace with sessions gets no client.
  vim.cmd('edit ' .. vim.fn.fnameescape(vim.env.PI_NVIM_OUTSIDE .. '/elsewhere.md'))
  vim.wait(500)
  T.eq(0, #vim.lsp.get_clients({ name = 'pi_lsp', bufnr = 0 }), 'clients on a file outside the workspace')

  -- Scratch buffers get no client.
  vim.cmd('PiContextInfo')
  vim.wait(1000, function()
    return vim.api.nvim_buf_get_name(0) == 'pi://context'
  end)
  T.eq('pi://context', vim.api.nvim_buf_get_name(0), 'context buffer')
  vim.wait(300)
  T.eq(0, #vim.lsp.get_clients({ name = 'pi_lsp', bufnr = 0 }), 'clients on the scratch buffer')

  -- With no client running, a command from a buffer without a file starts one
  -- for the working directory's workspace.
  for _, c in ipairs(vim.lsp.get_clients({ name = 'pi_lsp' })) do
    if vim.fn.has('nvim-0.11') == 1 then
      c:stop()
    else
      c.stop()
    end
  end
  T.wait(10000, function()
    return #vim.lsp.get_clients({ name = 'pi_lsp' }) == 0
  end, 'the client to stop')
  vim.cmd('enew')
  local done = T.record_done()
  vim.cmd('PiContextInfo')
  local ev = done.ok('pi.context', 30000, 'pi.context from a new client')
  T.eq(vim.env.PI_NVIM_SESSION, ev.result.session, 'session of the client started on demand')
  local c = vim.lsp.get_clients({ name = 'pi_lsp' })[1]
  T.ok(c, 'a client runs')
  T.eq(vim.env.PI_NVIM_WORKSPACE, c.root_dir, 'root of the client started on demand')
end)
