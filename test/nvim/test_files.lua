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
  local function abs(f)
    return vim.fs.normalize(f:match('^/') and f or (ws .. '/' .. f))
  end
  -- Files the agent read that changed on disk since are marked (the genuine
  -- sessions' cwd does not exist here, so what they read counts as deleted).
  local stale = {}
  for _, sf in ipairs(ev.result.stale or {}) do
    stale[abs(sf.path)] = sf.reason == 'modified' and 'modified since read' or sf.reason
  end
  local expected = {}
  local function want_item(f, kind)
    local mark = stale[abs(f)] and (' [stale: %s]'):format(stale[abs(f)]) or ''
    expected[#expected + 1] = abs(f) .. '|' .. kind .. mark
  end
  for _, f in ipairs(want.modifiedFiles or {}) do
    want_item(f, 'modified')
  end
  for _, f in ipairs(want.readFiles or {}) do
    want_item(f, 'read')
  end
  local listed = {}
  for _, e in ipairs(expected) do
    listed[e:match('^[^|]+')] = true
  end
  for _, sf in ipairs(ev.result.stale or {}) do
    if not listed[abs(sf.path)] then
      want_item(sf.path, 'read')
    end
  end
  T.info('stale: %s', vim.json.encode(ev.result.stale or {}))
  local got = {}
  for _, it in ipairs(qf.items) do
    got[#got + 1] = vim.fs.normalize(vim.api.nvim_buf_get_name(it.bufnr)) .. '|' .. it.text
  end
  T.eq(expected, got, 'quickfix entries (file|kind)')
  for _, it in ipairs(qf.items) do
    T.eq(it.text:find('[stale:', 1, true) and 'W' or '', it.type, 'quickfix type of ' .. it.text)
  end
  T.ok(vim.fn.getqflist({ winid = 0 }).winid ~= 0, 'the quickfix window is open')
  T.info('%d quickfix items: %s', #got, table.concat(got, ', '))
end)
