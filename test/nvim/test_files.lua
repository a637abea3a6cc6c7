-- :PiFiles fills the quickfix list with the files the session read and
-- modified, the same lists `pi-lsp files FILE --json` prints.
local T = dofile(vim.env.PI_NVIM_TESTS .. '/harness.lua')

T.run('files', function()
  local session, done = T.start()
  local ws = assert(vim.env.PI_NVIM_WORKSPACE)

  local code, out, err = T.system({ vim.env.PI_LSP_BIN, 'files', session, '--json' })
  T.eq(0, code, '`pi-lsp files --json` exit status (stderr: ' .. err .. ')')
  local want = vim.json.decode(out)
  local n = #(want.readFiles or {}) + #(want.modifiedFiles or {})
  T.ok(n > 0, 'the test session has file operations (%s)', out)

  vim.fn.setqflist({}, 'r')
  vim.cmd('PiFiles')
  local ev = done.ok('pi.files')
  T.eq(want, { readFiles = ev.result.readFiles, modifiedFiles = ev.result.modifiedFiles }, 'pi.files result vs CLI')

  local qf = vim.fn.getqflist({ items = 0, title = 0 })

  T.ok(qf.title:match('^Pi files'), 'quickfix title %q', qf.title)
  -- Which items a result makes (their order, the stale marks) is test_unit.lua's
  -- case of files_items; here: :PiFiles lists exactly those items for the server's
  -- result, and that names every file the CLI lists.
  local function line(file, text, kind)
    return vim.fs.normalize(file) .. '|' .. text .. '|' .. (kind or '')
  end
  local expected = vim.tbl_map(function(it)
    return line(it.filename, it.text, it.type)
  end, require('pi_lsp.commands').files_items(ev.result, ws))
  local got, listed = {}, {}
  for _, it in ipairs(qf.items) do
    local file = vim.fs.normalize(vim.api.nvim_buf_get_name(it.bufnr))
    got[#got + 1] = line(file, it.text, it.type)
    listed[file] = true
  end
  T.info('stale: %s', vim.json.encode(ev.result.stale or {}))
  T.eq(expected, got, 'quickfix entries (file|text|type)')
  for _, f in ipairs(vim.list_extend(vim.list_extend({}, want.modifiedFiles or {}), want.readFiles or {})) do
    local file = vim.fs.normalize(f:match('^/') and f or (ws .. '/' .. f))
    T.ok(listed[file], 'the quickfix list names %s', file)
  end
  T.ok(vim.fn.getqflist({ winid = 0 }).winid ~= 0, 'the quickfix window is open')
  T.info('%d quickfix items: %s', #got, table.concat(got, ', '))
end)
