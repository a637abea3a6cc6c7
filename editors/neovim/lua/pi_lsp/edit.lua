--- Preview and edit: a compaction summary (:PiPreview, :PiCompact!) or a
--- branch summary (:PiTree "Summarize and edit…", :PiNavigate {id} edit) in
--- an ordinary buffer; `:w` commits the buffer text.
---
--- The buffers are `buftype=acwrite`, filetype markdown, named
--- `pi://compaction/<session id>` and `pi://branch-summary/<session id>/<target id>`.
--- The whole buffer text is the summary: what the preview said (tokens, pinned
--- messages, that :w commits) is virtual text above the first line and the
--- window's 'winbar', never part of the text.
---
--- `:w` sends `pi/commitCompaction` {summary, spanKey} (or `pi/navigate`
--- {summarize = true, summary}) and waits for the answer for a moment, so that
--- `:wq` and `:x` work; the buffer is marked unmodified once the server wrote the
--- entry. A summary that drops a pinned message (`pinnedDropped`) asks whether to
--- commit anyway; a session that changed since the preview (`sessionChanged`)
--- asks for a new preview.
local M = {}

local ui = require('pi_lsp.ui')

local ns = vim.api.nvim_create_namespace('pi_lsp_edit')

--- How long `:w` waits for the server before returning (the commit goes on).
M.write_wait_ms = 15000

--- Per edit buffer.
---@type table<integer, {kind: 'compaction'|'branch', client_id: integer, session?: string, spanKey?: string, instructions?: string, targetId?: string, leafId?: string, preview: table, committed?: string, busy?: boolean}>
M.buffers = {}

--- The id part of a Pi session file name (`<timestamp>_<id>.jsonl`).
function M.session_id(path)
  if type(path) ~= 'string' or path == '' then
    return 'session'
  end
  local t = vim.fn.fnamemodify(path, ':t:r')
  return t:match('_([^_]+)$') or t
end

--- The text of an edit buffer: its lines joined with "\n".
function M.text(buf)
  return table.concat(vim.api.nvim_buf_get_lines(buf, 0, -1, false), '\n')
end

--- Shows `info` lines as virtual text above the first line, and the first
--- one in the winbar of the buffer's windows.
local function set_info(buf, info)
  if not vim.api.nvim_buf_is_valid(buf) then
    return
  end
  vim.api.nvim_buf_clear_namespace(buf, ns, 0, -1)
  local virt = {}
  for _, l in ipairs(info) do
    virt[#virt + 1] = { { l[1], l[2] or 'Comment' } }
  end
  pcall(vim.api.nvim_buf_set_extmark, buf, ns, 0, 0, { virt_lines = virt, virt_lines_above = true })
  vim.b[buf].pi_lsp_info = vim.tbl_map(function(l)
    return l[1]
  end, info)
  local bar = (info[1] and info[1][1] or ''):gsub('%%', '%%%%')
  for _, w in ipairs(vim.api.nvim_list_wins()) do
    if vim.api.nvim_win_get_buf(w) == buf then
      vim.wo[w].winbar = bar
    end
  end
end
M.set_info = set_info

--- The info lines of a buffer (virtual text).
function M.info(buf)
  return vim.b[buf].pi_lsp_info or {}
end

local write -- forward

--- Opens (or reuses) the edit buffer `name` with `text`, focused.
local function open_buffer(name, text, state, info)
  local buf = ui.find_buf(name)
  if not buf then
    buf = vim.api.nvim_create_buf(true, false)
    vim.api.nvim_buf_set_name(buf, name)
    vim.bo[buf].buftype = 'acwrite'
    vim.bo[buf].bufhidden = 'wipe'
    vim.bo[buf].swapfile = false
    vim.api.nvim_create_autocmd('BufWriteCmd', {
      buffer = buf,
      callback = function(ev)
        write(buf, ev)
      end,
    })
  end
  ui.track(M.buffers, buf, state)
  vim.bo[buf].modifiable = true
  -- The preview text is the start of the undo history.
  local ul = vim.bo[buf].undolevels
  vim.bo[buf].undolevels = -1
  vim.api.nvim_buf_set_lines(buf, 0, -1, false, ui.lines(text))
  vim.bo[buf].undolevels = ul
  vim.bo[buf].modified = false
  vim.bo[buf].filetype = 'markdown'
  local win = ui.buf_win(buf)
  if win then
    vim.api.nvim_set_current_win(win)
  else
    -- Not from inside a floating window (e.g. the :PiTree float).
    if vim.api.nvim_win_get_config(0).relative ~= '' then
      for _, w in ipairs(vim.api.nvim_tabpage_list_wins(0)) do
        if vim.api.nvim_win_get_config(w).relative == '' then
          vim.api.nvim_set_current_win(w)
          break
        end
      end
    end
    win = ui.open_window(buf, { layout = require('pi_lsp.config').options.edit.layout, split_height = 20 })
    vim.wo[win].wrap = true
    vim.wo[win].linebreak = true
  end
  set_info(buf, info)
  pcall(vim.api.nvim_win_set_cursor, win, { 1, 0 })
  -- Show the virtual lines above line 1.
  pcall(vim.fn.winrestview, { topline = 1, topfill = #info })
  return buf, win
end

local function audit_lines(audit)
  local out = {}
  if type(audit) ~= 'table' then
    return out
  end
  local mm = audit.missingModifiedFiles
  if type(mm) == 'table' and #mm > 0 then
    out[#out + 1] = { 'not mentioned: modified ' .. table.concat(mm, ', '), 'DiagnosticWarn' }
  end
  local mp = audit.missingPinned
  if type(mp) == 'table' and #mp > 0 then
    out[#out + 1] = { ('%d pinned message(s) not quoted'):format(#mp), 'DiagnosticWarn' }
  end
  return out
end

-- Compaction ---------------------------------------------------------------------

--- The info lines of a compaction preview.
function M.compaction_info(result)
  local info = {
    {
      ('Pi compaction preview: %s → %s tokens%s. :w commits it, :q! discards it'):format(
        ui.human(result.tokensBefore),
        ui.human(result.tokensAfter),
        result.fromDraft and ' (background draft)' or ''
      ),
      'DiagnosticInfo',
    },
    {
      ('%s message(s) summarized%s, %s kept from %s'):format(
        tostring(result.messagesToSummarize or '?'),
        result.isSplitTurn and ' (a split turn)' or '',
        tostring(result.keptMessages or '?'),
        tostring(result.firstKeptEntryId or '?')
      ),
    },
  }
  local pinned = type(result.pinned) == 'table' and result.pinned or {}
  if #pinned > 0 then
    info[#info + 1] = { ('%d pinned message(s) must stay quoted verbatim'):format(#pinned) }
  end
  vim.list_extend(info, audit_lines(result.audit))
  vim.list_extend(info, M.coverage_lines(result.coverage))
  return info
end

--- How many missing entities the preview's virtual lines list (the rest are counted).
M.max_missing_shown = 8

--- The key of a compaction preview buffer that keeps a missing entity (option
--- edit.keep_key, default "gK").
function M.keep_key()
  local e = require('pi_lsp.config').options.edit or {}
  return e.keep_key or 'gK'
end

--- What keeping entity `e` does: pin its message, or add it to the instructions.
function M.keep_action(e)
  if e.pinnable and type(e.entryId) == 'string' and e.entryId ~= '' then
    return 'pin ' .. e.entryId
  end
  return 'add "Keep: …" to the instructions'
end

--- One missing entity: "file internal/x.go (pin 1a2b3c4d)".
function M.entity_line(e)
  return ('%s %s (%s)'):format(tostring(e.kind or '?'), ui.one_line(e.text, 80), M.keep_action(e))
end

--- The info lines of a preview's coverage: "carries 12 of 15 critical entities (80%)",
--- the missing ones, and the key that keeps one.
function M.coverage_lines(cov)
  if type(cov) ~= 'table' then
    return {}
  end
  local entities = type(cov.entities) == 'table' and cov.entities or {}
  local missing = type(cov.missing) == 'table' and cov.missing or {}
  if #entities == 0 then
    return {}
  end
  local covered = tonumber(cov.covered) or ((#entities - #missing) / #entities)
  local out = {
    {
      ('carries %d of %d critical entities (%d%%)'):format(#entities - #missing, #entities, math.floor(covered * 100 + 0.5)),
      #missing > 0 and 'DiagnosticWarn' or 'DiagnosticOk',
    },
  }
  for i, e in ipairs(missing) do
    if i > M.max_missing_shown then
      out[#out + 1] = { ('  … and %d more missing (%s lists them all)'):format(#missing - M.max_missing_shown, M.keep_key()), 'DiagnosticWarn' }
      break
    end
    out[#out + 1] = { '  missing: ' .. M.entity_line(e), 'DiagnosticWarn' }
  end
  if #missing > 0 then
    out[#out + 1] = { ('%s keeps a missing entity: pins its message, or adds it to the instructions, and previews again'):format(M.keep_key()) }
  end
  return out
end

--- Keeps `entity` (one of the preview's coverage.missing) in the next summary of
--- compaction buffer `buf`: pins its message (pi/pin) when it is pinnable, else adds
--- "Keep: <text>" to the preview's instructions; then previews again into the same
--- buffer. Asks first when the buffer has edits, which the new preview replaces.
---@param cb? fun(err?: table, buf?: integer, result?: table)
function M.keep_entity(buf, entity, cb)
  local function finish(err, b, r)
    if cb then
      cb(err, b, r)
    end
  end
  local b = M.buffers[buf]
  if not b or b.kind ~= 'compaction' then
    ui.notify('not a Pi compaction preview', vim.log.levels.ERROR)
    return finish({ message = 'not a compaction preview' })
  end
  local client = ui.client_of(b)
  if not client then
    ui.notify('the pi-lsp client of this preview is gone; preview again', vim.log.levels.ERROR)
    return finish({ message = 'no client' })
  end
  local function regenerate()
    if entity.pinnable and type(entity.entryId) == 'string' and entity.entryId ~= '' then
      require('pi_lsp.commands').pin({ entryId = entity.entryId, pinned = true, session = b.session }, function(err)
        if err then
          return finish(err)
        end
        M.preview_compaction(b.instructions, finish, client.id)
      end, client.id)
      return
    end
    local keep = 'Keep: ' .. ui.one_line(entity.text)
    local instructions = (b.instructions and b.instructions ~= '') and (b.instructions .. '\n' .. keep) or keep
    M.preview_compaction(instructions, finish, client.id)
  end
  if vim.api.nvim_buf_is_valid(buf) and vim.bo[buf].modified and not b.committed then
    vim.ui.select({ 'Preview again (drop my edits)', 'Keep editing' }, {
      prompt = 'Keeping ' .. ui.one_line(entity.text, 60) .. ' makes a new preview, which replaces your edits:',
      kind = 'pi_lsp.keep_entity_edited',
    }, function(_, idx)
      if idx == 1 then
        regenerate()
      else
        finish(nil)
      end
    end)
    return
  end
  regenerate()
end

--- The keep key of a compaction preview: picks one of the missing entities
--- (vim.ui.select, kind "pi_lsp.keep_entity") and keeps it (M.keep_entity).
---@param cb? fun(err?: table, buf?: integer, result?: table)
function M.keep_missing(buf, cb)
  buf = (buf == nil or buf == 0) and vim.api.nvim_get_current_buf() or buf
  local b = M.buffers[buf]
  local cov = b and b.preview and b.preview.coverage
  local missing = type(cov) == 'table' and type(cov.missing) == 'table' and cov.missing or {}
  if not b or b.kind ~= 'compaction' then
    ui.notify('not a Pi compaction preview', vim.log.levels.ERROR)
  elseif b.committed then
    ui.notify(('already committed as %s; run :PiPreview for a new compaction'):format(b.committed), vim.log.levels.WARN)
  elseif #missing == 0 then
    ui.notify('the summary carries every critical entity')
  else
    return vim.ui.select(missing, {
      prompt = 'Keep in the summary:',
      kind = 'pi_lsp.keep_entity',
      format_item = M.entity_line,
    }, function(entity)
      if entity then
        M.keep_entity(buf, entity, cb)
      elseif cb then
        cb(nil)
      end
    end)
  end
  if cb then
    cb(nil)
  end
end

--- Previews a compaction (`pi/previewCompaction`) and opens the summary for editing.
---@param instructions? string
---@param cb? fun(err?: table, buf?: integer, result?: table)
---@param client_id? integer
function M.preview_compaction(instructions, cb, client_id)
  local commands = require('pi_lsp.commands')
  local args = {}
  instructions = instructions and vim.trim(instructions) or ''
  if instructions ~= '' then
    args.instructions = instructions
  end
  commands.run('pi.previewCompaction', args, function(err, result, client)
    local buf
    if err then
      commands.report_error('preview', err)
    elseif type(result) == 'table' and result.nothingToCompact then
      ui.notify('nothing to compact: ' .. tostring(result.reason or ''))
    elseif type(result) == 'table' and client then
      local name = 'pi://compaction/' .. M.session_id(result.session)
      buf = open_buffer(name, result.summary or '', {
        kind = 'compaction',
        client_id = client.id,
        session = result.session,
        spanKey = result.spanKey,
        instructions = args.instructions,
        preview = result,
      }, M.compaction_info(result))
      vim.keymap.set('n', M.keep_key(), function()
        M.keep_missing(buf)
      end, { buffer = buf, nowait = true, silent = true, desc = 'Pi: keep a missing entity (pin it, or add it to the instructions) and preview again' })
      ui.notify(('compaction preview: %s → %s tokens; edit it, :w commits'):format(
        ui.human(result.tokensBefore),
        ui.human(result.tokensAfter)
      ))
    end
    if cb then
      cb(err, buf, result)
    end
  end, client_id)
end

-- Branch summary ---------------------------------------------------------------------

--- The current leaf of a session (pi/context), without a PiCommandDone event.
local function leaf_of(client, session, cb)
  require('pi_lsp.client').request(client, 'pi/context', session and { session = session } or vim.empty_dict(),
    function(err, result)
      cb(not err and type(result) == 'table' and result.leafId ~= vim.NIL and result.leafId or nil)
    end)
end

function M.branch_info(result)
  return {
    {
      ('Pi branch summary preview: navigate to %s, summarizing %s entr%s left behind. :w commits, :q! discards'):format(
        tostring(result.targetId or '?'),
        tostring(result.entries or '?'),
        result.entries == 1 and 'y' or 'ies'
      ),
      'DiagnosticInfo',
    },
  }
end

--- Previews the summary of the branch a navigation to `args.targetId` leaves
--- (`pi/previewBranchSummary`) and opens it for editing.
---@param args {targetId: string, session?: string, instructions?: string}
---@param cb? fun(err?: table, buf?: integer, result?: table)
---@param client_id? integer
function M.preview_branch(args, cb, client_id)
  local commands = require('pi_lsp.commands')
  args = vim.deepcopy(args)
  if args.instructions == '' then
    args.instructions = nil
  end
  local leaf_at_preview
  local function preview(cid)
    commands.run('pi.previewBranchSummary', args, function(err, result, client)
      local buf
      if err then
        commands.report_error('branch summary preview', err)
      elseif type(result) == 'table' and client then
        local name = ('pi://branch-summary/%s/%s'):format(M.session_id(result.session), tostring(result.targetId or args.targetId))
        buf = open_buffer(name, result.summary or '', {
          kind = 'branch',
          client_id = client.id,
          session = result.session or args.session,
          targetId = result.targetId or args.targetId,
          instructions = args.instructions,
          leafId = leaf_at_preview,
          preview = result,
        }, M.branch_info(result))
        ui.notify(('branch summary preview for %s; edit it, :w navigates and writes it'):format(tostring(result.targetId)))
      end
      if cb then
        cb(err, buf, result)
      end
    end, cid)
  end
  -- The leaf the summarized branch ends at: pi/previewBranchSummary has no key
  -- like pi/commitCompaction's spanKey, so :w compares leaves itself.
  local client = client_id and vim.lsp.get_client_by_id(client_id) or require('pi_lsp.client').get(0)
  if not client or not client.initialized then
    return preview(client_id)
  end
  leaf_of(client, args.session, function(leaf)
    leaf_at_preview = leaf
    preview(client.id)
  end)
end

-- Commit ---------------------------------------------------------------------------------

local function committed(buf, what, id)
  local b = M.buffers[buf]
  if not b or not vim.api.nvim_buf_is_valid(buf) then
    return
  end
  b.committed = id or '?'
  vim.bo[buf].modified = false
  local again = b.kind == 'compaction' and ':PiPreview for a new one' or 'preview again from :PiTree for a new one'
  set_info(buf, { { ('Committed as %s %s; %s'):format(what, b.committed, again), 'DiagnosticOk' } })
  pcall(vim.api.nvim_exec_autocmds, 'User', {
    pattern = 'PiSummaryCommitted',
    modeline = false,
    data = { kind = b.kind, entryId = b.committed, session = b.session, bufnr = buf },
  })
end

--- Asks whether to commit buffer `buf` again, past what the server refused, with
--- q.opts (q.choice) or to keep editing (q.refused is said then).
---@param q {choice: string, prompt: string, kind: string, opts: table, refused: string}
local function commit_anyway(buf, q)
  vim.ui.select({ q.choice, 'Keep editing' }, { prompt = q.prompt, kind = q.kind }, function(_, idx)
    if idx == 1 and vim.api.nvim_buf_is_valid(buf) then
      M.commit(buf, q.opts)
    else
      ui.notify(q.refused, vim.log.levels.WARN)
    end
  end)
end

--- Commits the text of edit buffer `buf`.
---@param buf integer
---@param opts? {acceptDroppedPins?: boolean, leafMoved?: boolean}
---@param done? fun(ok: boolean) called once the server answered (not after a follow-up question)
function M.commit(buf, opts, done)
  opts = opts or {}
  local function finish(ok)
    if done then
      done(ok)
      done = nil
    end
  end
  local b = M.buffers[buf]
  if not b then
    ui.notify('not a Pi summary buffer', vim.log.levels.ERROR)
    return finish(false)
  end
  if b.committed then
    ui.notify(('already committed as %s; %s'):format(b.committed,
      b.kind == 'compaction' and 'run :PiPreview for a new compaction' or 'preview the branch summary again'), vim.log.levels.WARN)
    return finish(false)
  end
  if b.busy then
    ui.notify('a commit of this buffer is running', vim.log.levels.WARN)
    return finish(false)
  end
  local text = M.text(buf)
  if vim.trim(text) == '' then
    ui.notify('the summary is empty; nothing was written', vim.log.levels.ERROR)
    return finish(false)
  end
  local client = ui.client_of(b)
  if not client then
    ui.notify('the pi-lsp client of this preview is gone; preview again', vim.log.levels.ERROR)
    return finish(false)
  end
  local commands = require('pi_lsp.commands')
  local c = require('pi_lsp.client')
  b.busy = true

  if b.kind == 'branch' then
    local function go()
      commands.navigate({
        targetId = b.targetId,
        session = b.session,
        summarize = true,
        summary = text,
        instructions = b.instructions,
      }, function(err, result)
        b.busy = false
        if not err and type(result) == 'table' then
          local se = result.summaryEntry
          committed(buf, 'branch summary', type(se) == 'table' and se.id or nil)
          for tbuf, tb in pairs(require('pi_lsp.tree').buffers) do
            if tb.client_id == b.client_id then
              require('pi_lsp.tree').refresh(tbuf)
            end
          end
        end
        finish(err == nil)
      end, client.id)
    end
    if opts.leafMoved or not b.leafId then
      return go()
    end
    leaf_of(client, b.session, function(leaf)
      if not leaf or leaf == b.leafId then
        return go()
      end
      -- The leaf moved since the preview: the text may describe another branch.
      b.busy = false
      finish(false)
      commit_anyway(buf, {
        choice = 'Navigate and write it anyway',
        prompt = ('The session moved from %s to %s since this preview; the summary may describe another branch:')
          :format(b.leafId, leaf),
        kind = 'pi_lsp.leaf_moved',
        opts = { leafMoved = true },
        refused = 'not written: preview the branch summary again for the current leaf',
      })
    end)
    return
  end

  local args = { session = b.session, summary = text, spanKey = b.spanKey, instructions = b.instructions }
  if opts.acceptDroppedPins then
    args.acceptDroppedPins = true
  end
  commands.run('pi.commitCompaction', args, function(err, result)
    b.busy = false
    if not err and type(result) == 'table' then
      local entry = result.entry or {}
      local edited = type(entry.details) == 'table' and entry.details.edited
      ui.notify(('compaction committed (entry %s%s): %s → %s tokens'):format(
        tostring(entry.id or '?'),
        edited and ', edited' or '',
        ui.human(result.tokensBefore or entry.tokensBefore),
        ui.human(result.tokensAfter)
      ))
      committed(buf, 'compaction', entry.id)
      finish(true)
      return
    end
    local kind = c.error_kind(err)
    finish(false)
    if kind == 'pinnedDropped' then
      commit_anyway(buf, {
        choice = 'Commit anyway (drop the pinned messages)',
        prompt = 'The summary does not quote every pinned message: ' .. tostring(err.message or ''),
        kind = 'pi_lsp.pinned_dropped',
        opts = { acceptDroppedPins = true },
        refused = 'not committed: quote the pinned messages in the summary, then :w',
      })
    elseif kind == 'sessionChanged' then
      ui.notify('the session changed since this preview; nothing was written. Run :PiPreview again', vim.log.levels.ERROR)
      if vim.api.nvim_buf_is_valid(buf) then
        set_info(buf, { { 'Stale preview: the session changed. :PiPreview again (copy your edits first)', 'DiagnosticError' } })
      end
    else
      commands.report_error('commit', err)
    end
  end, client.id)
end

--- BufWriteCmd of an edit buffer: `:w` commits; `:w {other file}` writes a copy.
write = function(buf, ev)
  local name = vim.api.nvim_buf_get_name(buf)
  local target = ev and ev.file or name
  if target ~= '' and target ~= name and ev.match ~= name then
    local ok, res = pcall(vim.fn.writefile, vim.api.nvim_buf_get_lines(buf, 0, -1, false), vim.fn.fnamemodify(target, ':p'))
    if not ok or res ~= 0 then
      ui.notify('could not write ' .. target .. ': ' .. tostring(res), vim.log.levels.ERROR)
    else
      ui.notify('summary copied to ' .. target)
    end
    return
  end
  local finished = false
  M.commit(buf, nil, function()
    finished = true
  end)
  -- Wait a moment for the answer, so `:wq` and `:x` see the buffer unmodified.
  vim.wait(M.write_wait_ms, function()
    return finished
  end, 10)
end

return M
