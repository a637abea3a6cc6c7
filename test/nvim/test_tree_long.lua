-- :PiTree on a long linear session: pi.tree is asked for its flat form (no depth),
-- because Neovim's JSON decoder stops at 1000 levels of nesting and the nested form
-- nests two per entry. Every entry must be shown, the leaf last and marked.
local T = dofile(vim.env.PI_NVIM_TESTS .. '/harness.lua')

T.run('tree_long', function()
  local client = T.wait_client()
  local dir = vim.fs.dirname(assert(vim.env.PI_NVIM_SESSION))
  local path = dir .. '/2026-01-02T00-00-00-000Z_01900000-0000-7000-8000-00000000cafe.jsonl'
  local code, _, stderr = T.system({ vim.env.PI_LSP_BIN, 'gen', '--entries', '1500', '--seed', '7', '-o', path })
  T.eq(0, code, 'pi-lsp gen: ' .. stderr)
  local entries = #T.read_session(path) - 1
  T.ok(entries >= 1400, 'a long session (%d entries)', entries)

  local tree = require('pi_lsp.tree')
  local err, buf = T.await(60000, 'the tree of the long session', function(cb)
    tree.open(client, { session = path }, cb)
  end)
  T.ok(err == nil, 'pi.tree failed: %s', vim.inspect(err))
  local lines = vim.api.nvim_buf_get_lines(buf, 0, -1, false)
  local nodes = T.tree_nodes(buf)
  local count = #nodes
  local leaf = (T.tree_nodes(buf, function(node)
    return node.isLeaf
  end)[1] or {}).lnum
  T.info('%d entries, %d nodes shown, leaf on line %s of %d', entries, count, tostring(leaf), #lines)
  T.eq(entries, count, 'entries shown in the tree')
  T.ok(leaf and lines[leaf]:find('← leaf', 1, true), 'the leaf is marked')
end)
