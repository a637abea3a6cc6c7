package service

// Reporter is how a job of this package tells its front end what it is doing. The
// server implements it over its one progress tracker ($/progress and its
// notifications), the CLI over stderr lines (shown only on a terminal or with
// --progress), tests with a recorder. A job never blocks on it and never learns
// how a report is shown.
type Reporter interface {
	// Report is a step of the job: message for a person, percentage from 0 to 100
	// (-1 when the step has none). The front end throttles.
	Report(message string, percentage int)
	// Notice is something the user should see once, beside the result: a fallback
	// taken, a setting ignored, a part that could not be done.
	Notice(message string)
}

// NoReporter drops every report: for callers that show none.
type NoReporter struct{}

func (NoReporter) Report(string, int) {}
func (NoReporter) Notice(string)      {}
