package compaction

import (
	"encoding/json"
	"strings"

	"github.com/pi-lsp/pi-lsp/internal/session"
)

// The agent's own todo list, read from its todo tools: Claude Code's TodoWrite (the whole
// list each time), TaskCreate and TaskUpdate (one task at a time, numbered from 1), and
// Pi todo extensions (a "todo" tool with an action, or a list of items with a status).
// The last state of the list says what is done, in progress and still to do, in the
// agent's own words.

type todoItem struct {
	id, text, status string // status: pending, in_progress, completed
}

// todoStatus maps a tool's status words to pending, in_progress and completed.
func todoStatus(s string) string {
	switch strings.ToLower(strings.ReplaceAll(s, "-", "_")) {
	case "completed", "complete", "done", "finished":
		return "completed"
	case "in_progress", "active", "doing", "started":
		return "in_progress"
	case "cancelled", "canceled", "deleted", "removed":
		return "cancelled"
	}
	return "pending"
}

// readTodo updates the list from a tool call; ok reports that the call was a todo tool's
// (it is then no action of the work).
func (a *analysis) readTodo(b session.Block) bool {
	name := strings.ToLower(b.Name)
	if !strings.Contains(name, "todo") && name != "taskcreate" && name != "taskupdate" {
		return false
	}
	var args map[string]any
	if json.Unmarshal(b.Arguments, &args) != nil {
		return true
	}
	str := func(m map[string]any, keys ...string) string {
		for _, k := range keys {
			if s, _ := m[k].(string); s != "" {
				return s
			}
		}
		return ""
	}
	list, _ := args["todos"].([]any)
	if list == nil {
		list, _ = args["items"].([]any)
	}
	switch {
	case list != nil:
		a.todos = nil
		for i, e := range list {
			m, _ := e.(map[string]any)
			t := todoItem{id: str(m, "id"), text: str(m, "content", "text", "title", "subject"), status: todoStatus(str(m, "status"))}
			if t.id == "" {
				t.id = itoa(i + 1)
			}
			if t.text != "" {
				a.todos = append(a.todos, t)
			}
		}
	case name == "taskcreate":
		a.todos = append(a.todos, todoItem{id: itoa(len(a.todos) + 1), text: str(args, "subject", "description", "content"), status: "pending"})
	case name == "taskupdate" || str(args, "action") != "":
		id := str(args, "taskId", "id")
		if n, ok := args["id"].(float64); ok && id == "" {
			id = itoa(int(n))
		}
		action := strings.ToLower(str(args, "action"))
		if action == "add" || action == "create" {
			a.todos = append(a.todos, todoItem{id: itoa(len(a.todos) + 1), text: str(args, "text", "content", "title"), status: "pending"})
			break
		}
		for i := range a.todos {
			if a.todos[i].id != strings.TrimPrefix(id, "#") {
				continue
			}
			switch {
			case str(args, "status") != "":
				a.todos[i].status = todoStatus(str(args, "status"))
			case action == "toggle" || action == "complete" || action == "done":
				if a.todos[i].status == "completed" && action == "toggle" {
					a.todos[i].status = "pending"
				} else {
					a.todos[i].status = "completed"
				}
			case action == "clear" || action == "delete" || action == "remove":
				a.todos[i].status = "cancelled"
			}
		}
	}
	return true
}

func itoa(n int) string {
	if n < 10 {
		return string(rune('0' + n))
	}
	return itoa(n/10) + string(rune('0'+n%10))
}

// todosWith are the list's items of a status, in order.
func (a *analysis) todosWith(status string) []string {
	var out []string
	for _, t := range a.todos {
		if t.status == status {
			out = append(out, t.text)
		}
	}
	return out
}
