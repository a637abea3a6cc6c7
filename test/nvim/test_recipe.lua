-- After recipe_init.lua: the client attaches to a workspace buffer with the server the
-- recipe gives ($PI_RECIPE_WANT_CMD), the :Pi* commands exist, a command answers, and
-- the server's version is the plugin's; with a server of another version (handshake) the
-- plugin says so, once.
local T = dofile(vim.env.PI_NVIM_TESTS .. '/harness.lua')

T.run('recipe ' .. vim.env.PI_RECIPE, function()
  local recipe = vim.env.PI_RECIPE
  if _G.pi_recipe_build then
    T.ok(_G.pi_recipe_build.code == 0, 'the build step (make build) failed: %s', _G.pi_recipe_build.out)
  end
  local client = T.wait_client(30000)
  local want = vim.env.PI_RECIPE_WANT_CMD
  if recipe == 'vimpack' then
    T.ok(vim.fn.isdirectory(_G.pi_recipe_plugin_dir .. '/editors/neovim') == 1, 'vim.pack.add installed the repository in %s', _G.pi_recipe_plugin_dir)
  end
  local cmd = client.config.cmd[1]
  if cmd == 'pi-lsp' then
    cmd = vim.fn.exepath('pi-lsp')
  end
  T.eq(want, cmd, 'the server the recipe runs')
  for _, name in ipairs({ 'PiCompact', 'PiTree', 'PiContext', 'PiSessions', 'PiFiles' }) do
    T.eq(2, vim.fn.exists(':' .. name), ':' .. name .. ' is defined')
  end
  local version = require('pi_lsp.version')
  local server = (client.server_info or {}).version
  T.info('server %s (%s), plugin %s', tostring(server), cmd, version)
  local mismatch = 'server, Neovim plugin ' .. version .. ': update one of them'
  if recipe == 'handshake' then
    T.eq(vim.env.PI_RECIPE_SERVER_VERSION, server, 'the other server version')
    local want_msg = ('pi-lsp %s server, Neovim plugin %s: update one of them'):format(server, version)
    T.wait(5000, function()
      return T.noted(_G.pi_recipe_notes, want_msg)
    end, 'the message "' .. want_msg .. '"')
    -- Once: a second buffer of the workspace attaches the same client; nothing more is said.
    vim.cmd('edit ' .. vim.fn.fnameescape(vim.env.PI_NVIM_WORKSPACE .. '/sub/other.md'))
    T.wait(10000, function()
      return vim.lsp.get_clients({ name = 'pi_lsp', bufnr = 0 })[1]
    end, 'the client to attach to a second workspace file')
    local n = 0
    for _, note in ipairs(_G.pi_recipe_notes) do
      if note.msg == want_msg then
        n = n + 1
      end
    end
    T.eq(1, n, 'times the mismatch was said')
    return
  end
  T.eq(version, server, 'the server version is the plugin version')
  for _, note in ipairs(_G.pi_recipe_notes) do
    T.ok(not note.msg:find(mismatch, 1, true), 'no version message with matching versions: %s', note.msg)
  end
  local err, result = T.await(20000, 'pi.context', function(cb)
    require('pi_lsp').exec('pi.context', {}, cb)
  end)
  T.ok(err == nil, 'pi.context failed: %s', vim.inspect(err))
  T.ok(type(result) == 'table' and result.session == vim.env.PI_NVIM_SESSION, 'pi.context answered for the session: %s', vim.inspect(result))
end)
