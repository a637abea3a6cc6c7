-- :PiClearToolOutput on a session with large old tool results (a copy of
-- testdata/corpus/genuine-1.6/system-tools.jsonl with every toolResult's content
-- enlarged, as internal/rpc/clear_test.go's enlargeToolResults does): a dry run first,
-- whose results (tool, arguments, tokens), tokens saved and context figures the
-- question (vim.ui.select) shows; "Keep them" leaves the file byte-identical; "Clear
-- them" appends exactly one context_edit per previewed result, each targeting it; a
-- second run says there is nothing to clear; `:PiClearToolOutput restore` appends one
-- edit per result that brings its original content back. Then the compaction preview
-- of that session shows its coverage ("carries 3 of 4 critical entities (75%)") and the
-- missing entity (an aside of the agent's, a URL the summary has no reason to carry,
-- added to its first reply); gK on it (not pinnable: an assistant message's) previews
-- again with "Keep: <text>" in the instructions, and keeping a pinnable entity pins its
-- user message before previewing again. A pi/toolOutputCleared notification is told
-- with vim.notify. (The runner then loads the file in real Pi: the restored output is
-- back in the context.)
local T = dofile(vim.env.PI_NVIM_TESTS .. '/harness.lua')

local function read_bytes(path)
  local f = assert(io.open(path, 'rb'))
  local s = f:read('*a')
  f:close()
  return s
end

local text_of = T.text_of

local ASIDE = 'I skipped the mirror at https://mirror.example.net/pub/notes-archive since it was down.'

-- The enlarged copy of system-tools.jsonl in the workspace's sessions folder, under
-- Pi's file name, its header's cwd the workspace; only toolResult lines are rewritten.
local function make_session()
  local src = vim.env.PI_LSP_REPO .. '/testdata/corpus/genuine-1.6/system-tools.jsonl'
  local out, n, header, noted = {}, 0, nil, false
  for line in io.lines(src) do
    if line ~= '' then
      local e = vim.json.decode(line)
      if e.type == 'session' then
        header = e
        e.cwd = vim.env.PI_NVIM_WORKSPACE
        line = vim.json.encode(e)
      elseif e.type == 'message' and e.message.role == 'assistant' and not noted then
        -- An aside of the agent's that the summary has no reason to carry: the
        -- coverage's missing entity (a URL of an assistant message, so not pinnable).
        for _, b in ipairs(e.message.content) do
          if b.type == 'text' and not noted then
            b.text = b.text .. ' ' .. ASIDE
            noted = true
          end
        end
        line = vim.json.encode(e)
      elseif e.type == 'message' and e.message.role == 'toolResult' then
        n = n + 1
        e.message.content = { { type = 'text', text = string.rep(('line %d of a long tool output\n'):format(n), 200) } }
        line = vim.json.encode(e)
      end
      out[#out + 1] = line
    end
  end
  T.ok(header and n >= 3, 'system-tools.jsonl has a header and tool results (%d)', n)
  local dir = vim.fs.dirname(assert(vim.env.PI_NVIM_SESSION))
  local path = ('%s/%s_%s.jsonl'):format(dir, header.timestamp:gsub('[:.]', '-'), header.id)
  local f = assert(io.open(path, 'wb'))
  f:write(table.concat(out, '\n') .. '\n')
  f:close()
  return path
end

-- The lines of `path` after its first `n` bytes, decoded.
local function appended(path, original)
  local now = read_bytes(path)
  T.eq(original, now:sub(1, #original), 'the file only grew')
  local list = {}
  for line in now:sub(#original + 1):gmatch('[^\n]+') do
    list[#list + 1] = vim.json.decode(line)
  end
  return list, now
end

local function ids_of(list, field)
  local ids = {}
  for _, x in ipairs(list) do
    ids[#ids + 1] = x[field]
  end
  table.sort(ids)
  return ids
end

T.run('clear', function()
  local done = T.record_done()
  local notes = T.record_notify()
  T.wait_client()
  local commands = require('pi_lsp.commands')
  local ui = require('pi_lsp.ui')
  local edit = require('pi_lsp.edit')

  local path = make_session()
  vim.cmd('PiSelectSession ' .. vim.fn.fnameescape(path))
  done.ok('pi.selectSession', 30000)
  local by_id = T.by_id(T.read_session(path))
  local original = read_bytes(path)

  -- A usage error writes nothing.
  pcall(vim.cmd, 'PiClearToolOutput everything')
  T.ok(T.noted(notes, 'usage: :PiClearToolOutput [restore]'), 'a usage message')

  -- "Keep them": the dry run only; the file is byte-identical.
  local asked = T.answer_select('Keep them')
  vim.cmd('PiClearToolOutput')
  local dry = done.ok('pi.clearToolOutput', 30000, 'the dry run')
  T.eq(true, dry.arguments.dryRun, 'the first request is a dry run')
  local preview = dry.result
  T.ok(type(preview.cleared) == 'table' and #preview.cleared >= 2, 'old tool results to clear: %s', vim.inspect(preview))
  T.eq(1, #asked, 'asked once')
  T.eq(commands.CLEAR_CHOICES, asked[1].items, 'the choices')
  local prompt = asked[1].prompt
  T.info('prompt:\n%s', prompt)
  T.ok(prompt:find(('Clear %d old tool results'):format(#preview.cleared), 1, true), 'the prompt counts the results: %s', prompt)
  T.ok(prompt:find('~' .. ui.human(preview.saved), 1, true), 'the prompt tells the tokens saved')
  T.ok(prompt:find(('~%s → ~%s'):format(ui.human(preview.tokensBefore), ui.human(preview.tokensAfter)), 1, true),
    'the prompt tells the context before and after')
  for _, c in ipairs(preview.cleared) do
    T.ok(prompt:find(commands.cleared_line(c), 1, true), 'the prompt lists %s %s: %s', c.toolName, c.arguments, prompt)
    T.ok(prompt:find(c.toolName, 1, true) and prompt:find(ui.human(c.tokens), 1, true), 'tool and tokens of %s', c.entryId)
  end
  T.ok(T.noted(notes, 'nothing cleared'), 'answering no says nothing was cleared')
  vim.wait(300)
  T.eq(original, read_bytes(path), 'the session after "Keep them" (byte-identical)')

  -- "Clear them": one context_edit per previewed result, nothing else.
  asked = T.answer_select('Clear them')
  vim.cmd('PiClearToolOutput')
  dry = done.ok('pi.clearToolOutput', 30000, 'the second dry run')
  T.eq(true, dry.arguments.dryRun, 'a dry run first again')
  local cl = done.ok('pi.clearToolOutput', 30000, 'the clear')
  T.ok(not cl.arguments.dryRun and not cl.arguments.restore, 'then the clear: %s', vim.inspect(cl.arguments))
  T.eq(path, cl.arguments.session, 'the clear names the previewed session')
  local want = ids_of(dry.result.cleared, 'entryId')
  T.eq(want, ids_of(cl.result.cleared, 'entryId'), 'the results cleared are the previewed ones')
  local added, cleared_bytes = appended(path, original)
  T.eq(#want, #added, 'lines appended by the clear')
  for _, e in ipairs(added) do
    T.eq('context_edit', e.type, 'type of an appended line')
  end
  T.eq(want, ids_of(added, 'targetId'), 'the context_edit targets are the previewed entries')
  T.ok(T.noted(notes, ('cleared %d old tool results'):format(#want)), 'the clear is reported')

  -- Nothing left to clear: a message, nothing written, no question.
  asked = T.answer_select('Clear them')
  vim.cmd('PiClearToolOutput')
  local again = done.ok('pi.clearToolOutput', 30000, 'the dry run after the clear')
  T.eq(0, #again.result.cleared, 'nothing to clear after the clear')
  T.eq(0, #asked, 'no question when nothing is to clear')
  T.ok(T.noted(notes, 'no old tool output to clear'), 'nothing to clear is told')
  T.eq(cleared_bytes, read_bytes(path), 'nothing written when nothing is to clear')

  -- :PiClearToolOutput restore: one edit per cleared result, the original content back.
  vim.cmd('PiClearToolOutput restore')
  local rs = done.ok('pi.clearToolOutput', 30000, 'the restore')
  T.eq(true, rs.arguments.restore, 'a restore')
  T.eq(want, ids_of(rs.result.cleared, 'entryId'), 'the results restored')
  local restored = appended(path, cleared_bytes)
  T.eq(want, ids_of(restored, 'targetId'), 'the restore edits target the cleared results')
  for _, e in ipairs(restored) do
    T.eq('context_edit', e.type, 'type of a restore line')
    T.eq(text_of(by_id[e.targetId].message.content), text_of(e.replacement and e.replacement.content), 'restored content of ' .. e.targetId)
  end
  T.ok(T.noted(notes, ('restored %d tool results'):format(#want)), 'the restore is reported')

  -- pi/toolOutputCleared: a message.
  local handler = require('pi_lsp.handlers').handlers['pi/toolOutputCleared']
  local client = T.wait_client()
  local params = { session = path, cleared = dry.result.cleared, saved = 4200, tokensBefore = 9000, tokensAfter = 4800, reason = 'threshold' }
  handler(nil, vim.tbl_extend('force', params, { compacting = false }), { client_id = client.id })
  T.ok(T.noted(notes, ('cleared %d old tool results (~4.2k tokens) instead of compacting'):format(#want)), 'the notification without a compaction')
  handler(nil, vim.tbl_extend('force', params, { compacting = true }), { client_id = client.id })
  T.ok(T.noted(notes, ('cleared %d old tool results (~4.2k tokens), then compacted'):format(#want)), 'the notification with a compaction')

  -- The compaction preview shows the coverage and the missing entities.
  vim.cmd('PiPreview')
  local pv = done.ok('pi.previewCompaction', 60000, 'the preview')
  local cov = pv.result.coverage
  T.ok(type(cov) == 'table' and #cov.entities > 0 and #cov.missing > 0, 'a coverage with missing entities: %s', vim.inspect(cov))
  local buf = vim.api.nvim_get_current_buf()
  T.eq('pi://compaction/' .. edit.session_id(path), vim.api.nvim_buf_get_name(buf), 'the preview buffer')
  local info = table.concat(edit.info(buf), '\n')
  T.info('info:\n%s', info)
  local line = ('carries %d of %d critical entities (%d%%)'):format(#cov.entities - #cov.missing, #cov.entities,
    math.floor(cov.covered * 100 + 0.5))
  T.ok(info:find(line, 1, true), 'the coverage line %q: %s', line, info)
  for _, e in ipairs(cov.missing) do
    T.ok(info:find('missing: ' .. edit.entity_line(e), 1, true), 'the missing entity %s is listed', e.text)
  end
  T.ok(info:find('gK keeps a missing entity', 1, true), 'the help line names the key')
  T.ok(vim.fn.maparg('gK', 'n', false, true).buffer == 1, 'gK is mapped in the preview buffer')

  -- gK on a missing entity that is not pinnable: "Keep: <text>" in the instructions, a new preview.
  local miss
  for _, e in ipairs(cov.missing) do
    if not e.pinnable then
      miss = e
    end
  end
  T.ok(miss, 'a missing entity that is not pinnable: %s', vim.inspect(cov.missing))
  local size = #T.read_session(path)
  asked = T.answer_select(function(e)
    return e.kind == miss.kind and e.text == miss.text
  end)
  vim.api.nvim_feedkeys('gK', 'x', false)
  local pv2 = done.ok('pi.previewCompaction', 60000, 'the preview after gK')
  T.eq(1, #asked, 'gK asked which entity')
  T.ok(vim.tbl_contains(asked[1].lines, edit.entity_line(miss)), 'gK lists the missing entity: %s', vim.inspect(asked[1].lines))
  T.eq('Keep: ' .. miss.text, pv2.arguments.instructions, 'the instructions of the new preview')
  T.eq(size, #T.read_session(path), 'keeping by instructions writes nothing')
  T.eq(buf, vim.api.nvim_get_current_buf(), 'the new preview is in the same buffer')
  T.eq(pv2.result.summary, edit.text(buf), 'the buffer holds the new summary')
  T.eq('Keep: ' .. miss.text, edit.buffers[buf].instructions, 'the buffer keeps the instructions')

  -- Keeping a pinnable entity pins its user message, then previews again.
  local pin_e
  for _, e in ipairs(pv2.result.coverage.entities) do
    if e.pinnable and e.entryId then
      pin_e = e
    end
  end
  T.ok(pin_e, 'a pinnable entity: %s', vim.inspect(pv2.result.coverage.entities))
  edit.keep_entity(buf, pin_e)
  local pe = done.ok('pi.pin', 30000, 'the pin')
  T.eq({ pin_e.entryId, true }, { pe.arguments.entryId, pe.arguments.pinned }, 'the pin request')
  local last = T.read_session(path)
  last = last[#last]
  T.eq({ 'custom', 'pi-lsp/pin' }, { last.type, last.customType }, 'a pin entry was written')
  local pv3 = done.ok('pi.previewCompaction', 60000, 'the preview after the pin')
  local pinned_text = text_of(by_id[pin_e.entryId].message.content)
  T.ok(vim.tbl_contains(type(pv3.result.pinned) == 'table' and pv3.result.pinned or {}, pinned_text),
    'the new preview quotes the pinned message %q: %s', pinned_text, vim.inspect(pv3.result.pinned))
  local pinned_before = type(pv2.result.pinned) == 'table' and #pv2.result.pinned or 0
  T.eq(pinned_before + 1, #pv3.result.pinned, 'pinned messages after the pin')
  T.eq('Keep: ' .. miss.text, pv3.arguments.instructions, 'the instructions are kept')
  vim.cmd('bwipeout!')

  local first = by_id[want[1]]
  T.data.pi_check = { file = path, at = 'last', has = { text_of(first.message.content) } }
end)
