-- :PiRewind on the recording of testdata/rewind/agent-edits (real Pi 1.6.0 whose
-- scripted model wrote, edited and ran a command in a workspace), its workspace in the
-- final state: a dry run first, one diff buffer per file (each a unified diff of that
-- file) and the quickfix list holding what cannot come back (gen.txt, made by a bash
-- command, and the command itself); "Cancel" changes no file; "Rewind the files" makes
-- every file what it was at the end of turn 1, byte for byte, and writes nothing to the
-- session; `:PiRewind undo` puts the bytes back. A user edit after the agent's is a
-- conflict: in the quickfix list, and left alone by the rewind. Then :PiCondense on the
-- last turn (its prompt to its answer): a preview with the coverage, one context_edit per
-- message of the range, and `restore` brings them back.
local T = dofile(vim.env.PI_NVIM_TESTS .. '/harness.lua')

-- The bytes of the file at path, or nil when there is none.
local function read(path)
  local ok, bytes = pcall(vim.fn.readblob, path)
  return ok and bytes or nil
end

local function write(path, s)
  vim.fn.mkdir(vim.fs.dirname(path), 'p')
  local f = assert(io.open(path, 'wb'))
  f:write(s)
  f:close()
end

T.run('rewind', function()
  local done = T.record_done()
  local notes = T.record_notify()
  T.wait_client()
  local rw = require('pi_lsp.rewind')
  local dir = vim.env.PI_LSP_REPO .. '/testdata/rewind/agent-edits'
  local marks = vim.json.decode(read(dir .. '/marks.json'))
  local final, target = marks[#marks].files, marks[2]
  local ws = vim.fn.tempname()
  for f, c in pairs(final) do
    if c ~= vim.NIL then
      write(ws .. '/' .. f, c)
    end
  end
  local text = read(dir .. '/session.jsonl'):gsub('/tmp/pi%-lsp%-rewind/project', ws)
  local path = vim.fs.dirname(assert(vim.env.PI_NVIM_SESSION)) .. '/2026-12-04T00-00-00-000Z_rewind.jsonl'
  write(path, text)
  vim.cmd('PiSelectSession ' .. vim.fn.fnameescape(path))
  done.ok('pi.selectSession', 30000)

  local function holds(want, what, except)
    for f, c in pairs(want) do
      if f ~= except then
        local got = read(ws .. '/' .. f)
        T.eq(c ~= vim.NIL and c or nil, got, ('%s: %s'):format(what, f))
      end
    end
  end

  -- Cancel: the preview only.
  local asked = T.answer_select('Cancel')
  vim.cmd('PiRewind ' .. target.entry)
  local dry = done.ok('pi.rewind', 30000, 'the dry run')
  T.eq(true, dry.arguments.dryRun, 'a dry run first')
  local files = dry.result.files
  T.ok(#files >= 4, 'files to bring back: %d', #files)
  T.eq(#files, #rw.last_buffers, 'one diff buffer per file')
  for _, b in ipairs(rw.last_buffers) do
    local lines = vim.api.nvim_buf_get_lines(b.buf, 0, -1, false)
    T.eq('diff', vim.bo[b.buf].filetype, 'filetype of ' .. b.file.path)
    T.ok(table.concat(lines, '\n'):find('@@', 1, true), 'the diff buffer of %s holds a hunk', b.file.path)
    T.ok(vim.api.nvim_buf_get_name(b.buf):find(b.file.path, 1, true), 'named after %s', b.file.path)
  end
  local qf = vim.fn.getqflist()
  local qtext = table.concat(vim.tbl_map(function(i)
    return i.text
  end, qf), '\n')
  T.ok(qtext:find('not restorable', 1, true) and qtext:find('echo generated > gen.txt', 1, true), 'the quickfix list: %s', qtext)
  T.eq(1, #asked, 'asked once')
  T.eq(rw.REWIND_CHOICES, asked[1].items, 'the choices')
  T.ok(T.noted(notes, 'nothing rewound'), 'cancelling says so')
  holds(final, 'after Cancel')

  -- Rewind the files.
  local session_before = read(path)
  T.answer_select('Rewind the files')
  vim.cmd('PiRewind ' .. target.entry)
  done.ok('pi.rewind', 30000, 'the second dry run')
  local res = done.ok('pi.rewind', 30000, 'the rewind')
  T.eq('code', res.arguments.mode, 'the files only')
  T.ok(type(res.result.undo) == 'string', 'an undo id')
  holds(target.files, 'rewound', 'gen.txt')
  T.eq(session_before, read(path), 'the session after a code rewind (byte-identical)')
  T.ok(T.noted(notes, 'rewound: '), 'the rewind is reported')

  vim.cmd('PiRewind undo')
  done.ok('pi.rewind', 30000, 'the undo')
  holds(final, 'undone')

  -- A user edit after the agent's: a conflict, listed and left alone.
  local mine = 'package main\n\n// the user\'s own line\n'
  write(ws .. '/src/util.go', mine)
  T.answer_select('Rewind the files')
  vim.cmd('PiRewind ' .. target.entry)
  dry = done.ok('pi.rewind', 30000, 'the dry run with a conflict')
  local conflicts = vim.tbl_filter(function(i)
    return i.text:find('conflict', 1, true)
  end, vim.fn.getqflist())
  T.eq(1, #conflicts, 'one conflict in the quickfix list')
  T.ok(vim.api.nvim_buf_get_name(conflicts[1].bufnr):find('src/util.go', 1, true), 'the conflict is src/util.go')
  res = done.ok('pi.rewind', 30000, 'the rewind with a conflict')
  T.eq({ 'src/util.go' }, res.result.conflicts, 'the answer names the conflict')
  T.eq(mine, read(ws .. '/src/util.go'), 'the conflict is left alone')

  -- :PiCondense the last turn.
  local entries = T.read_session(path)
  local from, to
  for _, e in ipairs(entries) do
    if e.type == 'message' and e.message.role == 'user' and vim.json.encode(e.message.content):find('TURN4', 1, true) then
      from = e.id
    end
  end
  to = entries[#entries].id
  local before = read(path)
  local asked2 = T.answer_select('Condense')
  vim.cmd(('PiCondense %s %s'):format(from, to))
  local prev = done.ok('pi.condense', 30000, 'the condense preview')
  T.eq(true, prev.arguments.dryRun, 'a preview first')
  T.ok(asked2[1] and asked2[1].prompt:find('critical entities', 1, true), 'the question tells the coverage: %s', asked2[1] and asked2[1].prompt)
  local cond = done.ok('pi.condense', 30000, 'the condense')
  local n = #prev.result.targets
  T.ok(n >= 4, 'the range holds the turn: %d messages', n)
  local added = vim.split(read(path):sub(#before + 1), '\n', { trimempty = true })
  T.eq(n, #added, 'one context_edit per message of the range')
  T.eq(n, #cond.result.entries, 'the answer lists them')
  vim.cmd(('PiCondense %s restore'):format(from))
  local rest = done.ok('pi.condense', 30000, 'the restore')
  T.eq(n, #rest.result.entries, 'restore writes one edit per message')
end)
