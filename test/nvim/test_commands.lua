-- The Neovim user commands match the server's command table: every command
-- the server has (`pi-lsp commands --json` when the binary has it, and always
-- initialize's executeCommandProvider.commands) has a Neovim command, every
-- Neovim command the server names exists, the plugin calls no command the
-- server lacks, and every user command is documented in doc/pi_lsp.txt.
local T = dofile(vim.env.PI_NVIM_TESTS .. '/harness.lua')

T.run('commands', function()
  local client = T.wait_client()
  local map = require('pi_lsp.commands').server_commands
  local user = vim.api.nvim_get_commands({ builtin = false })

  local announced = client.server_capabilities.executeCommandProvider
  T.ok(type(announced) == 'table' and type(announced.commands) == 'table' and #announced.commands > 0,
    'initialize announces executeCommandProvider.commands')
  local server = {}
  for _, id in ipairs(announced.commands) do
    server[id] = { source = 'initialize' }
  end

  -- The server's own table, with the Neovim command it expects.
  local code, out, err = T.system({ vim.env.PI_LSP_BIN, 'commands', '--json' })
  local ok, table_json = pcall(vim.json.decode, out)
  if code == 0 and ok and type(table_json) == 'table' then
    T.info('`pi-lsp commands --json`: %d commands', #table_json)
    local ids = {}
    for _, row in ipairs(table_json) do
      T.ok(type(row.id) == 'string', 'row without id: %s', vim.inspect(row))
      ids[row.id] = true
      server[row.id] = server[row.id] or { source = 'commands --json' }
      server[row.id].neovim = row.neovim
    end
    for id in pairs(server) do
      T.ok(ids[id], '%s is announced in initialize but missing from `pi-lsp commands --json`', id)
    end
    T.data.command_source = 'commands --json + initialize'
  else
    T.info('`pi-lsp commands --json` is not available (exit %d: %s); using initialize only', code, vim.trim(err))
    T.data.command_source = 'initialize'
  end

  local missing = {}
  for id, row in vim.spairs(server) do
    local name = map[id]
    if not name then
      missing[#missing + 1] = id .. ' (no entry in pi_lsp.commands.server_commands)'
    elseif not user[name] then
      missing[#missing + 1] = id .. ' (:' .. name .. ' is not defined)'
    end
    if type(row.neovim) == 'string' and row.neovim ~= '' then
      local want = row.neovim:gsub('^:', ''):match('^(%S+)')
      if not user[want] then
        missing[#missing + 1] = ('%s (the server names :%s, which is not defined)'):format(id, want)
      end
    elseif row.neovim ~= nil and row.neovim ~= vim.NIL then
      missing[#missing + 1] = ('%s (neovim field %s)'):format(id, vim.inspect(row.neovim))
    end
  end
  T.ok(#missing == 0, 'server commands without a Neovim command:\n  %s', table.concat(missing, '\n  '))

  local extra = {}
  for id in pairs(map) do
    if not server[id] then
      extra[#extra + 1] = id
    end
  end
  table.sort(extra)
  T.ok(#extra == 0, 'the plugin maps commands the server does not have: %s', table.concat(extra, ', '))

  -- Every :Pi* command is documented in the help file.
  local doc = table.concat(vim.fn.readfile(vim.env.PI_LSP_REPO .. '/editors/neovim/doc/pi_lsp.txt'), '\n')
  local undocumented = {}
  for name in pairs(require('pi_lsp.commands').user_commands) do
    T.ok(user[name], ':%s is registered', name)
    if not doc:find('*:' .. name .. '*', 1, true) then
      undocumented[#undocumented + 1] = name
    end
  end
  table.sort(undocumented)
  T.ok(#undocumented == 0, 'commands missing from doc/pi_lsp.txt: %s', table.concat(undocumented, ', '))
  T.info('%d server commands, all mapped', vim.tbl_count(server))
end)
