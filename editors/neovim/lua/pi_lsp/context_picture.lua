--- :PiContext: the context at a glance in a floating window (pi/contextBreakdown):
--- a text bar per kind (category, tokens, share of the context), the free space up
--- to Pi's compaction threshold, the largest entries (<CR> shows one in :PiTree),
--- and a sparkline of the context's size along the session's path with its
--- compactions, branch summaries and context edits marked. r refreshes, q closes.
local M = {}

local ui = require('pi_lsp.ui')

local BUF_NAME = 'pi://context-picture'
local BAR = 24
local LARGEST = 10
local SPARKS = { '▁', '▂', '▃', '▄', '▅', '▆', '▇', '█' }
--- The marker of each event under the sparkline.
M.MARKS = { compaction = 'C', branch_summary = 'B', context_edit = 'E' }

--- Per buffer: client id, session, entries by line, the last result.
---@type table<integer, {client_id: integer, session?: string, items: table<integer, table>, result?: table}>
M.buffers = {}

local function pct(n, total)
  if type(total) ~= 'number' or total <= 0 then
    return 0
  end
  return 100 * n / total
end

local function bar(share)
  local n = math.floor(share / 100 * BAR + 0.5)
  n = math.max(0, math.min(BAR, n))
  return string.rep('█', n) .. string.rep('·', BAR - n)
end

--- The sparkline of a history: one column per point (the largest of a bucket when
--- there are more points than columns), and the line of event markers under it.
---@return string spark, string marks
function M.sparkline(history, width)
  local n = #history
  if n == 0 then
    return '', ''
  end
  local cols = math.max(1, math.min(n, width))
  local top = 0
  for _, p in ipairs(history) do
    top = math.max(top, tonumber(p.tokens) or 0)
  end
  local spark, marks = {}, {}
  for c = 1, cols do
    local from = math.floor((c - 1) * n / cols) + 1
    local to = math.max(from, math.floor(c * n / cols))
    local v, mark = 0, ' '
    for i = from, to do
      local p = history[i]
      v = math.max(v, tonumber(p.tokens) or 0)
      local ev = type(p.event) == 'string' and M.MARKS[p.event]
      if ev and (mark == ' ' or ev == 'C') then
        mark = ev
      end
    end
    local level = top > 0 and math.floor(v / top * (#SPARKS - 1) + 0.5) + 1 or 1
    spark[#spark + 1] = SPARKS[level]
    marks[#marks + 1] = mark
  end
  return table.concat(spark), (table.concat(marks):gsub('%s+$', ''))
end

--- The lines of a pi/contextBreakdown result (with its history), and the entries by line.
---@return string[] lines, table<integer, table> items
function M.render(result, width)
  width = width or 80
  local human = ui.human
  local total, window = tonumber(result.total) or 0, tonumber(result.contextWindow) or 0
  local threshold = tonumber(result.threshold)
  local lines = {
    ('Pi context: ~%s tokens (Pi\'s estimate), %.1f%% of the %s window'):format(human(total), pct(total, window), human(window)),
  }
  local function add(s)
    lines[#lines + 1] = s
  end
  if tonumber(result.usageTokens) then
    add(('Last reply\'s usage: %s tokens'):format(human(result.usageTokens)))
  else
    add('Last reply\'s usage: none to trust (after a compaction or a context edit, or none yet)')
  end
  if threshold then
    add(('Pi compacts above %s tokens (reserve %s): %s to go'):format(human(threshold), human(result.reserveTokens),
      human(math.max(0, threshold - total))))
  else
    add('Automatic compaction is off')
  end
  add('<CR> show an entry in the tree   r refresh   q close')
  add('')
  add('What fills it')
  local kw = 12
  for _, k in ipairs(result.kinds or {}) do
    kw = math.max(kw, #tostring(k.kind))
  end
  for _, k in ipairs(result.kinds or {}) do
    local share = pct(k.tokens, total)
    add(('  %-' .. kw .. 's %7s %5.1f%%  %s  %d entr%s'):format(k.kind, human(k.tokens), share, bar(share), k.entries,
      k.entries == 1 and 'y' or 'ies'))
  end
  add(('  %-' .. kw .. 's %7s %5.1f%%  (of the window)'):format('total', human(total), pct(total, window)))
  if threshold then
    add(('  %-' .. kw .. 's %7s %5.1f%%  (of the window, up to the threshold)'):format('free', human(math.max(0, threshold - total)),
      pct(math.max(0, threshold - total), window)))
  end
  add(('  %-' .. kw .. 's %7s %5.1f%%  (of the window)'):format('reserve', human(result.reserveTokens), pct(result.reserveTokens, window)))

  add('')
  add('Largest entries')
  local items = {}
  local all = {}
  for _, k in ipairs(result.kinds or {}) do
    for _, e in ipairs(k.largest or {}) do
      all[#all + 1] = { entryId = e.entryId, tokens = e.tokens, preview = e.preview, kind = k.kind }
    end
  end
  table.sort(all, function(a, b)
    return a.tokens > b.tokens
  end)
  for i = 1, math.min(LARGEST, #all) do
    local e = all[i]
    local head = ('  %7s  %s  %-' .. kw .. 's  '):format(human(e.tokens), tostring(e.entryId), e.kind)
    add(head .. ui.one_line(e.preview, math.max(10, width - vim.fn.strdisplaywidth(head) - 2)))
    items[#lines] = e
  end
  if #all == 0 then
    add('  (empty context)')
  end

  local history = type(result.history) == 'table' and result.history or {}
  add('')
  add(('Size over the path: %d points (C compaction, B branch summary, E context edit)'):format(#history))
  if #history > 0 then
    local spark, marks = M.sparkline(history, math.max(10, width - 4))
    add('  ' .. spark)
    if marks ~= '' then
      add('  ' .. marks)
    end
    local top, last = 0, history[#history]
    for _, p in ipairs(history) do
      top = math.max(top, tonumber(p.tokens) or 0)
    end
    add(('  peak %s, now %s (%s)'):format(human(top), human(last.tokens), last.source == 'usage' and 'usage' or 'estimate'))
    for _, p in ipairs(history) do
      if p.event == 'compaction' and tonumber(p.tokensBefore) then
        add(('  compaction %s: %s → %s'):format(tostring(p.entryId), human(p.tokensBefore), human(p.tokens)))
        items[#lines] = p
      end
    end
  end
  return lines, items
end

local function request(client, session, cb)
  require('pi_lsp.client').request(client, 'pi/contextBreakdown', { session = session, history = true }, cb)
end

ui.session_view(M, {
  label = 'context',
  command = 'pi.contextBreakdown',
  request = request,
  render = M.render,
  buf_name = BUF_NAME,
  float = true,
  window = function()
    return { layout = 'float', title = 'Pi context', filetype = 'pi_lsp_context', width = 0.9, height = 0.85 }
  end,
  keymaps = function(show_in_tree)
    return {
      { 'r', M.refresh, 'Pi: refresh' },
      { '<CR>', show_in_tree, 'Pi: show this entry in the tree' },
    }
  end,
})

return M
