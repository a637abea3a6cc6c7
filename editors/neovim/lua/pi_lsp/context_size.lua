--- :PiContextBySize: the messages of the current LLM context by estimated tokens,
--- largest first, in a buffer. x hides the message under the cursor from the
--- context, e replaces its content there, u restores it, <CR> shows it in
--- :PiTree, r refreshes, q closes.
local M = {}

local ui = require('pi_lsp.ui')

local BUF_NAME = 'pi://context-size'
local HEADER_LINES = 3

--- Per buffer: client id, session, items by line, the last result.
---@type table<integer, {client_id: integer, session?: string, items: table<integer, table>, result?: table}>
M.buffers = {}

local MARKS = { omitted = '⊘ hidden', replaced = '✎ replaced' }

local one_line = require('pi_lsp.ui').one_line

--- The lines of a pi.contextBySize result, and the items by line.
---@return string[] lines, table<integer, table> items
function M.render(result, width)
  width = width or 100
  local total = result.tokens
  if type(total) ~= 'number' then
    total = result.projectedTokens
  end
  local lines = {
    ('Pi context by size: %s tokens in %d messages'):format(ui.human(total), #(result.messages or {})),
    'x hide   e replace   u restore   <CR> show in tree   r refresh   q close',
    '',
  }
  local items = {}
  for _, m in ipairs(result.messages or {}) do
    local kind = tostring(m.role or m.type or '?')
    if type(m.toolName) == 'string' and m.toolName ~= '' then
      kind = kind .. ' ' .. m.toolName
    end
    local tokens = m.tokens
    if m.contextEdit == 'omitted' and type(m.originalTokens) == 'number' then
      tokens = m.originalTokens
    end
    local mark = MARKS[m.contextEdit] and ('  ' .. MARKS[m.contextEdit]) or ''
    local head = ('%7s  %s  %-20s '):format(ui.human(tokens), tostring(m.entryId), one_line(kind, 20))
    local text = head .. one_line(m.preview, math.max(10, width - vim.fn.strdisplaywidth(head) - #mark - 2)) .. mark
    if not m.editable then
      text = text .. '  (not editable)'
    end
    lines[#lines + 1] = text
    items[#lines] = m
  end
  if #lines == HEADER_LINES then
    lines[#lines + 1] = '(empty context)'
  end
  return lines, items
end

local function at_cursor(buf)
  local b = M.buffers[buf]
  return b and b.items[vim.api.nvim_win_get_cursor(0)[1]] or nil
end

local function edit(action)
  return function(buf)
    local it = at_cursor(buf)
    if not it then
      return
    end
    local b = M.buffers[buf]
    require('pi_lsp.commands').edit_context_interactive(it.entryId, action,
      { session = b.session, client_id = b.client_id, preview = it.preview }, function(err)
        if not err and vim.api.nvim_buf_is_valid(buf) then
          M.refresh(buf)
        end
      end)
  end
end

ui.session_view(M, {
  label = 'context by size',
  command = 'pi.contextBySize',
  request = function(client, session, cb)
    require('pi_lsp.client').exec(client, 'pi.contextBySize', { session = session }, cb)
  end,
  render = M.render,
  first_line = HEADER_LINES + 1,
  buf_name = BUF_NAME,
  window = function()
    return { layout = require('pi_lsp.config').options.context.layout, title = 'Pi context by size',
      filetype = 'pi_lsp_context_size', split_height = 15 }
  end,
  keymaps = function(show_in_tree)
    return {
      { 'x', edit('omit'), 'Pi: hide this message from the context' },
      { 'e', edit('replace'), 'Pi: replace this message in the context' },
      { 'u', edit('restore'), 'Pi: restore this message to the context' },
      { 'r', M.refresh, 'Pi: refresh' },
      { '<CR>', show_in_tree, 'Pi: show this message in the tree' },
    }
  end,
})

return M
