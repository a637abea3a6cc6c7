package rpc

import "encoding/json"

// The small subset of LSP 3.17 types pi-lsp needs. Progress tokens stay raw so a numeric
// client token round-trips exactly; percentage is a pointer so 0 is sent.

type clientInfo struct {
	Name    string `json:"name"`
	Version string `json:"version,omitempty"`
}

type workspaceFolder struct {
	URI  string `json:"uri"`
	Name string `json:"name"`
}

type initializeParams struct {
	ProcessID             *int              `json:"processId"`
	ClientInfo            *clientInfo       `json:"clientInfo,omitempty"`
	RootURI               *string           `json:"rootUri"`
	RootPath              *string           `json:"rootPath,omitempty"`
	WorkspaceFolders      []workspaceFolder `json:"workspaceFolders,omitempty"`
	InitializationOptions json.RawMessage   `json:"initializationOptions,omitempty"`
	Capabilities          struct {
		Window struct {
			WorkDoneProgress bool `json:"workDoneProgress"`
			ShowMessage      *struct {
				MessageActionItem *struct {
					AdditionalPropertiesSupport bool `json:"additionalPropertiesSupport"`
				} `json:"messageActionItem,omitempty"`
			} `json:"showMessage,omitempty"`
		} `json:"window"`
		Experimental struct {
			Pi struct {
				Hooks bool `json:"hooks"`
			} `json:"pi"`
		} `json:"experimental"`
	} `json:"capabilities"`
}

type serverInfo struct {
	Name    string `json:"name"`
	Version string `json:"version"`
}

type executeCommandOptions struct {
	Commands         []string `json:"commands"`
	WorkDoneProgress bool     `json:"workDoneProgress"`
}

type serverCapabilities struct {
	ExecuteCommandProvider executeCommandOptions    `json:"executeCommandProvider"`
	Experimental           experimentalCapabilities `json:"experimental"`
}

// experimentalCapabilities announces pi-lsp's own surface (from the command table).
type experimentalCapabilities struct {
	Pi piCapabilities `json:"pi"`
}

type piCapabilities struct {
	Methods       []string `json:"methods"`
	Notifications []string `json:"notifications"`
	Hooks         []string `json:"hooks"`
}

type initializeResult struct {
	Capabilities serverCapabilities `json:"capabilities"`
	ServerInfo   serverInfo         `json:"serverInfo"`
}

type cancelParams struct {
	ID json.RawMessage `json:"id"`
}

type progressParams struct {
	Token json.RawMessage `json:"token"`
	Value any             `json:"value"`
}

type workDoneProgressBegin struct {
	Kind        string  `json:"kind"` // "begin"
	Title       string  `json:"title"`
	Cancellable bool    `json:"cancellable"`
	Message     string  `json:"message,omitempty"`
	Percentage  *uint32 `json:"percentage,omitempty"`
}

type workDoneProgressReport struct {
	Kind        string  `json:"kind"` // "report"
	Cancellable bool    `json:"cancellable"`
	Message     string  `json:"message,omitempty"`
	Percentage  *uint32 `json:"percentage,omitempty"`
}

type workDoneProgressEnd struct {
	Kind    string `json:"kind"` // "end"
	Message string `json:"message,omitempty"`
}

type workDoneProgressCreateParams struct {
	Token json.RawMessage `json:"token"`
}

type workDoneProgressCancelParams struct {
	Token json.RawMessage `json:"token"`
}

type executeCommandParams struct {
	Command       string            `json:"command"`
	Arguments     []json.RawMessage `json:"arguments,omitempty"`
	WorkDoneToken json.RawMessage   `json:"workDoneToken,omitempty"`
}

// MessageType values of window/showMessage and window/logMessage.
const (
	msgError   = 1
	msgWarning = 2
	msgInfo    = 3
	msgLog     = 4
)

type showMessageParams struct {
	Type    int    `json:"type"`
	Message string `json:"message"`
}

type didChangeConfigurationParams struct {
	Settings json.RawMessage `json:"settings"`
}
