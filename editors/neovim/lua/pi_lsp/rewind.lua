--- Rewind and cut points: bring the agent's files back to an entry (a diff buffer per
--- file, a quickfix list of conflicts, a question before anything is written), undo a
--- rewind, condense a range of the context, and the two summaries of the tree
--- ("summarize up to here": a compaction kept from the entry; "summarize from here":
--- navigate to its parent with a branch summary).
local ui = require('pi_lsp.ui')

local M = {}

local function cmds()
  return require('pi_lsp.commands')
end

--- Opens one scratch buffer per file of a rewind preview, holding the unified diff
--- from the disk to what the rewind writes; returns the buffers.
function M.diff_buffers(result)
  local bufs = {}
  for _, f in ipairs(type(result.files) == 'table' and result.files or {}) do
    local buf = vim.api.nvim_create_buf(false, true)
    local name = ('pi-rewind://%s'):format(f.path)
    pcall(vim.api.nvim_buf_set_name, buf, name)
    local lines = vim.split(f.diff or '', '\n', { plain = true })
    if lines[#lines] == '' then
      lines[#lines] = nil
    end
    if f.conflict then
      table.insert(lines, 1, '# conflict: changed since the session\'s last change; left alone unless picked')
    end
    vim.api.nvim_buf_set_lines(buf, 0, -1, false, lines)
    vim.bo[buf].filetype = 'diff'
    vim.bo[buf].modifiable = false
    vim.bo[buf].bufhidden = 'wipe'
    bufs[#bufs + 1] = { buf = buf, file = f }
  end
  return bufs
end

--- Sets the quickfix list to the conflicts of a rewind preview (and the files it cannot
--- bring back); returns how many items it holds.
function M.conflict_qflist(result)
  local items = {}
  for _, f in ipairs(type(result.files) == 'table' and result.files or {}) do
    if f.conflict then
      items[#items + 1] = { filename = f.absPath, lnum = 1, text = 'conflict: changed since the session\'s last change (left alone)' }
    end
  end
  for _, n in ipairs(type(result.notRestorable) == 'table' and result.notRestorable or {}) do
    items[#items + 1] = { filename = n.path, lnum = 1, text = 'not restorable: ' .. tostring(n.reason) }
  end
  for _, c in ipairs(type(result.bashCommands) == 'table' and result.bashCommands or {}) do
    items[#items + 1] = { text = 'not undone (command run after the entry): $ ' .. tostring(c) }
  end
  vim.fn.setqflist({}, 'r', { title = 'Pi rewind', items = items })
  return #items
end

M.REWIND_CHOICES = { 'Rewind the files', 'Rewind the files and the conversation', 'Cancel' }

--- The question asked before a rewind writes.
function M.prompt(result)
  local n, c = 0, 0
  for _, f in ipairs(result.files or {}) do
    if f.conflict then
      c = c + 1
    else
      n = n + 1
    end
  end
  return ('Rewind %d file%s to this entry?%s (the replaced bytes are kept: :PiRewind undo)'):format(
    n, n == 1 and '' or 's', c > 0 and (' %d conflict%s left alone (quickfix list)'):format(c, c == 1 and '' or 's') or '')
end

local function report(result)
  local msg = ('rewound: %d restored, %d removed'):format(#(result.restored or {}), #(result.removed or {}))
  if #(result.conflicts or {}) > 0 then
    msg = msg .. (', %d conflict%s left alone'):format(#result.conflicts, #result.conflicts == 1 and '' or 's')
  end
  if type(result.undo) == 'string' then
    msg = msg .. ' (:PiRewind undo puts them back)'
  end
  ui.notify(msg)
end

--- Runs server command `id` with `args` as a dry run and hands a table answer to
--- ask(result, client, finish); an error (reported as "<what>: <message>") or an
--- answer that is no table ends there. finish(err, result, client) hands the caller
--- the answer of the write, or (nil, nil) when nothing was written.
local function preview_then(id, what, args, cb, client_id, ask)
  local function finish(err, result, client)
    if cb then
      cb(err, result, client)
    end
  end
  cmds().run(id, vim.tbl_extend('force', args, { dryRun = true }), function(err, result, client)
    if err then
      cmds().report_error(what, err)
      return finish(err, nil, client)
    end
    if type(result) ~= 'table' then
      return finish(nil, nil, client)
    end
    ask(result, client, finish)
  end, client_id)
end

local REWIND = { id = 'pi.rewind', what = 'rewind', done = report }

--- :PiRewind {id}: previews (dryRun), shows a diff buffer per file and the conflicts
--- in the quickfix list, asks (vim.ui.select, kind "pi_lsp.rewind"), then rewinds the
--- files (or the files and the conversation). opts.mode skips the question's choice.
--- cb(err, result, client) gets the answer of the write, or (nil, nil) when nothing
--- was written.
---@param opts {entryId: string, session?: string, mode?: string, files?: string[], force?: boolean}
function M.rewind(opts, cb, client_id)
  preview_then('pi.rewind', 'rewind', { entryId = opts.entryId, session = opts.session }, cb, client_id, function(result, client, finish)
    M.conflict_qflist(result)
    if #(result.files or {}) == 0 then
      ui.notify('no file to bring back to ' .. opts.entryId)
      return finish(nil, nil, client)
    end
    M.last_buffers = M.diff_buffers(result)
    if M.last_buffers[1] then
      vim.cmd('tab sbuffer ' .. M.last_buffers[1].buf)
      for i = 2, #M.last_buffers do
        vim.cmd('vertical sbuffer ' .. M.last_buffers[i].buf)
      end
    end
    local function go(mode)
      local args = { entryId = opts.entryId, session = opts.session or result.session, mode = mode, files = opts.files, force = opts.force }
      cmds().send(REWIND, args, finish, client and client.id)
    end
    if opts.mode then
      return go(opts.mode)
    end
    vim.ui.select(M.REWIND_CHOICES, { prompt = M.prompt(result), kind = 'pi_lsp.rewind' }, function(_, idx)
      if idx == 1 then
        go('code')
      elseif idx == 2 then
        go('both')
      else
        ui.notify('nothing rewound')
        finish(nil, nil, client)
      end
    end)
  end)
end

local UNDO = {
  id = 'pi.rewind',
  what = 'undo rewind',
  done = function(result)
    local n = #(result.restored or {}) + #(result.removed or {})
    ui.notify(('rewind undone: %d file%s put back'):format(n, n == 1 and '' or 's'))
  end,
}

--- :PiRewind undo: puts back the bytes the session's last rewind replaced.
function M.undo(opts, cb, client_id)
  cmds().send(UNDO, { undo = true, session = opts and opts.session }, cb, client_id)
end

local RESTORE = {
  id = 'pi.condense',
  what = 'restore condensed range',
  done = function(result)
    ui.notify(('restored %d messages: context ~%s → ~%s tokens'):format(#(result.entries or {}), ui.human(result.tokensBefore), ui.human(result.tokensAfter)))
  end,
}

--- :PiCondense {from} {to}: previews the summary (dryRun), asks (kind
--- "pi_lsp.condense"), then condenses; :PiCondense {from} restore brings the range back.
---@param opts {fromId: string, toId?: string, restore?: boolean, session?: string, instructions?: string}
function M.condense(opts, cb, client_id)
  if opts.restore then
    return cmds().send(RESTORE, { fromId = opts.fromId, restore = true, session = opts.session }, cb, client_id)
  end
  local args = { fromId = opts.fromId, toId = opts.toId, session = opts.session, instructions = opts.instructions }
  preview_then('pi.condense', 'condense', args, cb, client_id, function(result, client, finish)
    local cov = type(result.coverage) == 'table' and result.coverage or {}
    local n_ent, n_miss = #(cov.entities or {}), #(cov.missing or {})
    local prompt = ('Condense %d messages into this summary? context ~%s → ~%s tokens; it carries %d of %d critical entities\n%s'):format(
      #(result.targets or {}), ui.human(result.tokensBefore), ui.human(result.tokensAfter), n_ent - n_miss, n_ent, tostring(result.summary or ''))
    vim.ui.select({ 'Condense', 'Cancel' }, { prompt = prompt, kind = 'pi_lsp.condense' }, function(_, idx)
      if idx ~= 1 then
        ui.notify('nothing condensed')
        return finish(nil, nil, client)
      end
      args.session = args.session or result.session
      cmds().send({
        id = 'pi.condense',
        what = 'condense',
        done = function(res)
          ui.notify(('condensed %d messages: context ~%s → ~%s tokens (:PiCondense %s restore brings them back)'):format(
            #(res.targets or {}), ui.human(res.tokensBefore), ui.human(res.tokensAfter), opts.fromId))
        end,
      }, args, finish, client and client.id)
    end)
  end)
end

local SUMMARIZE_UP_TO = {
  id = 'pi.compact',
  what = 'summarize up to here',
  done = function(result, _, args)
    if type(result.entry) == 'table' then
      ui.notify(('summarized up to %s: %s → %s tokens'):format(args.keepFrom, ui.human(result.tokensBefore), ui.human(result.tokensAfter)))
    end
  end,
}

--- "Summarize up to here": a compaction whose kept part starts at the entry.
function M.summarize_up_to(opts, cb, client_id)
  cmds().send(SUMMARIZE_UP_TO, { keepFrom = opts.entryId, session = opts.session }, cb, client_id)
end

--- "Summarize from here": the leaf moves to the entry's parent with a branch summary
--- of what is left (the early context stays verbatim).
function M.summarize_from(opts, cb, client_id)
  if not opts.parentId then
    ui.notify('summarize from here: the first entry has no parent', vim.log.levels.ERROR)
    return cb and cb('no parent')
  end
  cmds().navigate({ targetId = opts.parentId, summarize = true, session = opts.session }, cb, client_id)
end

return M
