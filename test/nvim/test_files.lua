-- :PiFiles fills the quickfix list with the files the session read and
-- modified, the same lists `pi-lsp files FILE --json` prints.
local T = dofile(vim.env.PI_NVIM_TESTS .. '/harness.lua')

T.run('files', function()
  local session = assert(vim.env.PI_NVIM_SESSION)
  local ws = assert(vim.env.PI_NVIM_WORKSPACE)
  local done = T.record_done()
  T.wait_client()

  local code, out, err = T.system({ vim.env.PI_LSP_BIN, 'files', session, '--json' })
  T.eq(0, code, '`pi-lsp files --json` exit status (stderr: ' .. err .. ')')
  local want = vim.json.decode(out)
  local n = #(want.readFiles or {}) + #(want.modifiedFiles or {})
  T.ok(n > 0, 'the test session has file operations (%s)', out)

  vim.fn.setqflist({}, 'r')
  vim.cmd('PiFiles')
  local ev = done.wait('pi.files')
  T.ok(ev.error == nil, 'pi.files failed: %s', vim.inspect(ev.error))
  T.eq(want, { readFiles = ev.result.readFiles, modifiedFiles = ev.result.modifiedFiles }, 'pi.files result vs CLI')

  local qf = vim.fn.getqflist({ items = 0, title = 0 })
  T.eq(n, #qf.items, 'quickfix items')
  T.ok(qf.title:match('^Pi files'), 'quickfix title %q', qf.title)
  local function abs(f)
    return vim.fs.normalize(f:match('^/') and f or (ws .. '/' .. f))
  end
  local expected = {}
  for _, f in ipairs(want.modifiedFiles or {}) do
    expected[#expected + 1] = abs(f) .. '|modified'
  end
  for _, f in ipairs(want.readFiles or {}) do
    expected[#expected + 1] = abs(f) .. '|read'
  end
  local got = {}
  for _, it in ipairs(qf.items) do
    got[#got + 1] = vim.fs.normalize(vim.api.nvim_buf_get_name(it.bufnr)) .. '|' .. it.text
  end
  T.eq(expected, got, 'quickfix entries (file|kind)')
  T.ok(vim.fn.getqflist({ winid = 0 }).winid ~= 0, 'the quickfix window is open')
  T.info('%d quickfix items: %s', #got, table.concat(got, ', '))
end)
