package quality

import (
	"encoding/json"
	"fmt"
	"math"
	"regexp"
	"sort"
	"strings"
)

// Dimension is one subscore of the rubric.
type Dimension struct {
	Key    string
	Name   string
	Weight float64
}

// Dimensions are the rubric's subscores and weights (Pi compaction rubric v0.3); the
// weights sum to 1.
var Dimensions = []Dimension{
	{"goal", "Goal and intent", 0.14},
	{"constraints", "Constraints and preferences", 0.10},
	{"progress", "Progress state", 0.15},
	{"next", "Next actions", 0.12},
	{"entities", "Critical entities", 0.12},
	{"precision", "Entity precision", 0.05},
	{"files", "File operations", 0.08},
	{"blockers", "Blocker fidelity", 0.06},
	{"actionability", "Actionability", 0.06},
	{"recency", "Recency", 0.06},
	{"structure", "Structure", 0.05},
	{"compression", "Compression", 0.01},
}

// Penalty is one deduction from the weighted sum.
type Penalty struct {
	Name  string
	Value float64
}

// Score is a scored summary.
type Score struct {
	Total     float64            // the weighted sum less the penalties, in [0, 1]
	Raw       float64            // the weighted sum
	Dims      map[string]float64 // by Dimension.Key
	Penalties []Penalty          // in a fixed order
	Missed    []string           // what the annotation asked for and the summary lacks
}

// Penalty is the value of the named penalty (0 when not applied).
func (s Score) Penalty(name string) float64 {
	for _, p := range s.Penalties {
		if p.Name == name {
			return p.Value
		}
	}
	return 0
}

// Section groups: where each kind of fact may be found. Names are lower case; the
// split-turn part's sections (Pi's turn-prefix format) count where they mean the same.
var (
	goalSections       = []string{"goal", "original request"}
	latestSections     = []string{"goal", "original request", "in progress", "next steps"}
	constraintSections = []string{"constraints & preferences", "original request"}
	doneSections       = []string{"done", "progress so far"}
	inProgressSections = []string{"in progress", "original request", "context needed to continue"}
	blockedSections    = []string{"blocked", "in progress", "critical context", "context needed to continue"}
	nextSections       = []string{"next steps", "context needed to continue"}
	historyHeadings    = []string{"## Goal", "## Constraints & Preferences", "## Progress", "### Done", "### In Progress", "### Blocked", "## Key Decisions", "## Next Steps", "## Critical Context"}
	branchHeadings     = historyHeadings[:len(historyHeadings)-1]
	turnPrefixHeadings = []string{"## Original Request", "## Progress So Far", "## Context Needed to Continue"}
	// placeholderSections should hold content in any checkpoint (In Progress and Blocked
	// may rightly be empty).
	placeholderSections = []string{"goal", "constraints & preferences", "done", "key decisions", "next steps", "critical context"}
)

// summaryDoc is a summary split into sections.
type summaryDoc struct {
	text      string              // the summary without its file blocks
	sections  map[string][]string // lower-cased heading → body lines
	headings  []string            // "## Goal", ... in order
	readBlock []string
	modBlock  []string
	hasBlocks bool
}

var (
	headingRe    = regexp.MustCompile(`^(#{1,4})\s+(.+?)\s*$`)
	readBlockRe  = regexp.MustCompile(`(?s)<read-files>\s*(.*?)\s*</read-files>`)
	modBlockRe   = regexp.MustCompile(`(?s)<modified-files>\s*(.*?)\s*</modified-files>`)
	fileBlocksRe = regexp.MustCompile(`(?s)<(read|modified)-files>.*?</(read|modified)-files>`)
)

func parseSummary(summary string) *summaryDoc {
	d := &summaryDoc{sections: map[string][]string{}}
	if m := readBlockRe.FindStringSubmatch(summary); m != nil {
		d.readBlock, d.hasBlocks = nonEmptyLines(m[1]), true
	}
	if m := modBlockRe.FindStringSubmatch(summary); m != nil {
		d.modBlock, d.hasBlocks = nonEmptyLines(m[1]), true
	}
	d.text = strings.TrimSpace(fileBlocksRe.ReplaceAllString(summary, ""))
	cur := ""
	for _, line := range strings.Split(d.text, "\n") {
		if m := headingRe.FindStringSubmatch(line); m != nil {
			d.headings = append(d.headings, m[1]+" "+m[2])
			cur = strings.ToLower(strings.Trim(m[2], " :*"))
			if _, ok := d.sections[cur]; !ok {
				d.sections[cur] = nil
			}
			continue
		}
		if strings.TrimSpace(line) == "---" || strings.HasPrefix(strings.TrimSpace(line), "**Turn Context") {
			cur = ""
			continue
		}
		if cur != "" && strings.TrimSpace(line) != "" {
			d.sections[cur] = append(d.sections[cur], line)
		}
	}
	return d
}

func nonEmptyLines(s string) []string {
	var out []string
	for _, l := range strings.Split(s, "\n") {
		if l = strings.TrimSpace(l); l != "" {
			out = append(out, l)
		}
	}
	return out
}

// body is the text of the named sections, lower-cased and normalized.
func (d *summaryDoc) body(names []string) string {
	var parts []string
	for _, n := range names {
		parts = append(parts, d.sections[n]...)
	}
	return norm(strings.Join(parts, "\n"))
}

// items are the lines of the named sections, each normalized.
func (d *summaryDoc) items(names []string) []string {
	var out []string
	for _, n := range names {
		for _, l := range d.sections[n] {
			out = append(out, norm(l))
		}
	}
	return out
}

var (
	emphasisRe = regexp.MustCompile("`|\\*\\*|\\*")
	spaceRe    = regexp.MustCompile(`\s+`)
)

// norm lower-cases text, drops backticks and emphasis and collapses white space.
func norm(s string) string {
	s = emphasisRe.ReplaceAllString(strings.ToLower(s), "")
	return strings.TrimSpace(spaceRe.ReplaceAllString(s, " "))
}

// matches reports whether text (normalized) holds every term of fact.
func matches(text, fact string) bool {
	for _, term := range strings.Split(fact, " & ") {
		ok := false
		for _, alt := range strings.Split(term, " | ") {
			if a := norm(alt); a != "" && strings.Contains(text, a) {
				ok = true
				break
			}
		}
		if !ok {
			return false
		}
	}
	return true
}

func matchesAnyItem(items []string, fact string) bool {
	for _, it := range items {
		if matches(it, fact) {
			return true
		}
	}
	return false
}

// recall is the share of facts found in text, and the facts missed.
func recall(text string, facts []string) (float64, []string) {
	if len(facts) == 0 {
		return 1, nil
	}
	var missed []string
	hit := 0
	for _, f := range facts {
		if matches(text, f) {
			hit++
		} else {
			missed = append(missed, f)
		}
	}
	return float64(hit) / float64(len(facts)), missed
}

var (
	bulletRe      = regexp.MustCompile(`^\s*(?:[-*+]\s+(?:\[[ xX]\]\s+)?|\d+[.)]\s+)`)
	placeholderRe = regexp.MustCompile(`(?i)^(?:\(none[^)]*\)|none\.?|n/?a|-|tbd|todo|\[.*\]|\(no [^)]*\)|\(not [^)]*\)|nothing\.?|no blockers?\.?|no issues?\.?)$`)
	genericStepRe = regexp.MustCompile(`(?i)^(?:continue(?: (?:the|with the) (?:work|task))?(?: from the kept messages)?\b.*|proceed\b.*|keep going\.?|finish:.*|wait for the user\.?)$`)
)

// stripBullet is an item without its list marker.
func stripBullet(line string) string {
	return strings.TrimSpace(bulletRe.ReplaceAllString(line, ""))
}

func isPlaceholder(line string) bool {
	s := strings.Trim(stripBullet(line), "*_ ")
	return s == "" || placeholderRe.MatchString(s)
}

// placeholderOnly reports whether a section has no line but placeholders.
func (d *summaryDoc) placeholderOnly(name string) bool {
	for _, l := range d.sections[name] {
		if !isPlaceholder(l) {
			return false
		}
	}
	return true
}

var (
	wordRe        = regexp.MustCompile(`[A-Za-z][A-Za-z0-9_\-]{2,}`)
	backtickRe    = regexp.MustCompile("`([^`\n]+)`")
	pathTokRe     = regexp.MustCompile(`(?:^|[\s(\[\"'])((?:\.{0,2}/)?(?:[\w.\-+@]+/)+[\w.\-+@]*[\w+@-]|/[\w.\-+@]+(?:/[\w.\-+@]+)+)`)
	urlRe         = regexp.MustCompile(`https?://[^\s)>"'` + "`" + `]+`)
	hexIDRe       = regexp.MustCompile(`\b[0-9a-f]{7,40}\b`)
	issueRe       = regexp.MustCompile(`#\d{2,}\b`)
	resolvedRe    = regexp.MustCompile(`(?i)\b(fixed|resolved|now pass(es)?|passes|passed|passing|no longer|succeeded|works now|was fixed|earlier|previously|stale|green)\b`)
	claimRe       = regexp.MustCompile(`(?i)\b(all (?:the )?(?:tasks|work|steps|changes|items) (?:are |is )?(?:done|complete|completed|finished)|(?:the )?task is (?:complete|done|finished)|everything (?:is )?(?:done|complete|finished|working)|nothing (?:is )?(?:left|remaining)|no (?:further|remaining|more) (?:work|steps|changes)|fully (?:implemented|complete|done))\b`)
	continuation  = []string{"i can help", "sure,", "here is the answer", "let me know", "would you like", "happy to help"}
	speakerRe     = regexp.MustCompile(`(?mi)^\s*(assistant|user)\s*:`)
	malformedRe   = regexp.MustCompile(`%20|&nbsp;|&#\d+;|&amp;`)
	harnessRe     = regexp.MustCompile(`(?i)</?(?:system-reminder|environment_details|task-notification|command-name|command-message|command-args|local-command-stdout|user-prompt-submit-hook)\b|Caveat: The messages below were generated`)
	imperativeRe  = regexp.MustCompile(`(?i)^(?:if [^,]{1,80}, )?(?:then )?(?:add|address|apply|ask|build|bump|change|check|clean|commit|compare|configure|confirm|convert|create|debug|delete|deploy|document|drop|enable|ensure|extend|extract|fix|finish|handle|implement|inspect|install|investigate|keep|look|make|measure|merge|migrate|move|open|port|profile|push|re-run|read|rebase|record|reduce|refactor|release|remove|rename|reply|replace|reproduce|request|restart|restore|resume|retry|return|review|revert|rerun|roll|run|scale|send|set|ship|split|start|switch|tag|test|tighten|trace|try|undo|update|upgrade|use|validate|verify|wire|write)\b`)
	concreteRe    = regexp.MustCompile("`[^`]+`|(?:[\\w.\\-]+/)+[\\w.\\-]+|\\b[\\w\\-]+\\.(?:go|ts|js|py|rs|md|json|yaml|yml|toml|sql|sh|tsx|jsx|css|html|lua)\\b|https?://")
	numberedRe    = regexp.MustCompile(`(?m)^\s*\d+[.)]\s+\S`)
	templateRe    = regexp.MustCompile(`^\[.*\]$`)
	shingleSize   = 12
	overCopyRatio = 0.5
)

// words are the words of text, lower-cased (three letters or more).
func words(s string) []string {
	ws := wordRe.FindAllString(s, -1)
	for i, w := range ws {
		ws[i] = strings.ToLower(w)
	}
	return ws
}

// summaryEntities are the concrete entities a summary names: backtick spans, paths,
// URLs, hexadecimal ids and #numbers.
func summaryEntities(text string) (ents []string, broken int) {
	seen := map[string]bool{}
	add := func(e string) {
		e = strings.TrimSpace(e)
		if !strings.HasSuffix(e, "/...") {
			e = strings.TrimRight(e, ".,:;)")
		}
		if len(e) < 3 || seen[e] {
			return
		}
		seen[e] = true
		ents = append(ents, e)
	}
	for _, line := range strings.Split(text, "\n") {
		if strings.Count(line, "`")%2 == 1 {
			broken++
		}
		for _, m := range backtickRe.FindAllStringSubmatch(line, -1) {
			if strings.HasSuffix(m[1], "…") || (strings.HasSuffix(m[1], "...") && !strings.HasSuffix(m[1], "/...")) {
				broken++
				continue
			}
			add(m[1])
		}
		plain := backtickRe.ReplaceAllString(line, " ")
		for _, m := range pathTokRe.FindAllStringSubmatch(plain, -1) {
			add(m[1])
		}
		for _, m := range urlRe.FindAllString(plain, -1) {
			add(m)
		}
		for _, m := range hexIDRe.FindAllString(plain, -1) {
			add(m)
		}
		for _, m := range issueRe.FindAllString(plain, -1) {
			add(m)
		}
	}
	return ents, broken
}

// supported reports whether an entity of the summary comes from the source.
func supported(e, source, normSource string, want []string) bool {
	if strings.Contains(source, e) {
		return true
	}
	if strings.Contains(normSource, spaceRe.ReplaceAllString(e, " ")) {
		return true
	}
	for _, w := range want {
		if strings.Contains(w, e) {
			return true
		}
	}
	return false
}

func f1(found, expected []string) float64 {
	if len(expected) == 0 {
		if len(found) == 0 {
			return 1
		}
		return 0
	}
	if len(found) == 0 {
		return 0
	}
	exp := map[string]bool{}
	for _, e := range expected {
		exp[e] = true
	}
	tp := 0
	seen := map[string]bool{}
	for _, f := range found {
		if exp[f] && !seen[f] {
			tp++
		}
		seen[f] = true
	}
	if tp == 0 {
		return 0
	}
	p, r := float64(tp)/float64(len(seen)), float64(tp)/float64(len(exp))
	return 2 * p * r / (p + r)
}

func clamp(x float64) float64 { return math.Max(0, math.Min(1, x)) }

// ScoreSummary scores a produced summary against its case's annotation.
func ScoreSummary(p *Produced) Score {
	return score(p.Case.Kind, p.Case.Want, p.Summary, p.Source, p.SplitTurn)
}

func score(kind Kind, w Expect, summary, source string, split bool) Score {
	d := parseSummary(summary)
	s := Score{Dims: map[string]float64{}}
	miss := func(what string, facts []string) {
		for _, f := range facts {
			s.Missed = append(s.Missed, what+": "+f)
		}
	}
	normSource := norm(source)
	text := norm(d.text)
	noise := harnessRe.FindAllString(d.text, -1)
	for _, n := range w.Noise {
		if strings.Contains(d.text, n) {
			noise = append(noise, n)
		}
	}

	// Goal and intent: the goal, and the latest request.
	goalBody := d.body(goalSections)
	g, missed := recall(goalBody, w.Goal)
	miss("goal", missed)
	goal := g
	if w.Latest != "" {
		l := 0.0
		if matches(d.body(latestSections), w.Latest) {
			l = 1
		} else {
			miss("latest request", []string{w.Latest})
		}
		goal = 0.6*g + 0.4*l
	}
	for _, n := range noise {
		if strings.Contains(strings.ToLower(strings.Join(d.sections["goal"], "\n")+strings.Join(d.sections["original request"], "\n")), strings.ToLower(n)) {
			goal *= 0.5
			break
		}
	}
	s.Dims["goal"] = goal

	// Constraints and preferences.
	c, missed := recall(d.body(constraintSections), w.Constraints)
	miss("constraint", missed)
	if len(w.Constraints) == 0 {
		c = 1
	}
	s.Dims["constraints"] = c

	// Progress state: done, in progress and blocked, each where it belongs.
	doneR, missed := recall(d.body(doneSections), w.Done)
	miss("done", missed)
	ipR, missed := recall(d.body(inProgressSections), w.InProgress)
	miss("in progress", missed)
	blR, missed := recall(d.body(blockedSections), w.Blocked)
	miss("blocked", missed)
	var num, den float64
	for _, part := range []struct {
		facts  []string
		r, wgt float64
	}{{w.Done, doneR, 0.4}, {w.InProgress, ipR, 0.35}, {w.Blocked, blR, 0.25}} {
		if len(part.facts) > 0 {
			num += part.r * part.wgt
			den += part.wgt
		}
	}
	progress := 1.0
	if den > 0 {
		progress = num / den
	}
	// Open work reported as done is a fabricated completion (a split turn's "Progress So
	// Far" lists steps of the open turn, not a claim that it is finished).
	doneItems := d.items([]string{"done"})
	open := append(append([]string(nil), w.InProgress...), w.Blocked...)
	fabricated := 0
	for _, f := range open {
		if matchesAnyItem(doneItems, f) {
			fabricated++
		}
	}
	if len(open) > 0 {
		progress -= 0.5 * float64(fabricated) / float64(len(open))
	}
	// Done work reported as unfinished.
	ipItems := d.items([]string{"in progress"})
	unfinished := 0
	for _, f := range w.Done {
		if matchesAnyItem(ipItems, f) && !matches(d.body(doneSections), f) {
			unfinished++
		}
	}
	if len(w.Done) > 0 {
		progress -= 0.3 * float64(unfinished) / float64(len(w.Done))
	}
	s.Dims["progress"] = clamp(progress)

	// Next actions.
	nextLines := append(append([]string(nil), d.sections["next steps"]...), d.sections["context needed to continue"]...)
	var nextItems []string
	for _, l := range nextLines {
		if it := stripBullet(l); it != "" && !isPlaceholder(l) && !genericStepRe.MatchString(it) {
			nextItems = append(nextItems, it)
		}
	}
	next, missed := recall(norm(strings.Join(nextItems, "\n")), w.Next)
	miss("next", missed)
	if len(w.Next) == 0 {
		// Nothing is left to do: any step that is not the template's placeholder will do,
		// "(none)" included.
		next = 0
		for _, l := range nextLines {
			if it := stripBullet(l); it != "" && !templateRe.MatchString(it) {
				next = 1
				break
			}
		}
	}
	s.Dims["next"] = next

	// Critical entities, kept whole.
	hits := 0
	for _, e := range w.Entities {
		if entityWhole(summary, e) {
			hits++
		} else {
			s.Missed = append(s.Missed, "entity: "+e)
		}
	}
	entRecall := 1.0
	if len(w.Entities) > 0 {
		entRecall = float64(hits) / float64(len(w.Entities))
	}
	ents, broken := summaryEntities(d.text)
	unsupported := broken
	var unsup []string
	for _, e := range ents {
		if !supported(e, source, normSource, w.Entities) {
			unsupported++
			unsup = append(unsup, e)
		}
	}
	precision := 1.0
	if n := len(ents) + broken; n > 0 {
		precision = clamp(1 - float64(unsupported)/float64(n))
	}
	for _, e := range unsup {
		s.Missed = append(s.Missed, "unsupported entity: "+e)
	}
	entities := 0.75*entRecall + 0.25*precision
	if s.Dims["progress"] < 0.35 && next < 0.35 {
		entities = math.Min(entities, 0.5) // entities without state do not win alone
	}
	s.Dims["entities"] = entities
	s.Dims["precision"] = precision

	// File operations: the blocks Pi appends, read-only and modified apart.
	var files float64
	switch {
	case len(w.ReadFiles) == 0 && len(w.ModifiedFiles) == 0:
		files = 1
		if len(d.readBlock)+len(d.modBlock) > 0 {
			files = 0.5
		}
	case !d.hasBlocks:
		var mentioned []string
		for _, f := range append(append([]string(nil), w.ReadFiles...), w.ModifiedFiles...) {
			if strings.Contains(d.text, f) {
				mentioned = append(mentioned, f)
			}
		}
		files = 0.55 * f1(mentioned, append(append([]string(nil), w.ReadFiles...), w.ModifiedFiles...))
	default:
		files = 0.45*f1(d.readBlock, w.ReadFiles) + 0.55*f1(d.modBlock, w.ModifiedFiles)
	}
	s.Dims["files"] = files

	// Blocker fidelity: open blockers carried, resolved ones not presented as current.
	blockedItems := d.items(blockedSections)
	staleCurrent := 0
	for _, f := range w.Stale {
		for _, it := range blockedItems {
			if matches(it, f) && !resolvedRe.MatchString(it) {
				staleCurrent++
				s.Missed = append(s.Missed, "stale error presented as current: "+f)
				break
			}
		}
	}
	blockers := 1.0
	if len(w.Blocked) > 0 {
		blockers = blR
	}
	if len(w.Stale) > 0 {
		blockers -= 0.5 * math.Min(1, float64(staleCurrent)/float64(len(w.Stale)))
	}
	s.Dims["blockers"] = clamp(blockers)

	// Actionability: ordered, concrete, imperative next steps.
	numbered := len(numberedRe.FindAllString(strings.Join(d.sections["next steps"], "\n"), -1))
	concrete, imperative := 0, 0
	for _, it := range nextItems {
		if concreteRe.MatchString(it) {
			concrete++
		}
		if imperativeRe.MatchString(strings.Trim(it, "*_ ")) {
			imperative++
		}
	}
	s.Dims["actionability"] = clamp(0.25*math.Min(float64(numbered), 3)/3 + 0.40*math.Min(float64(concrete), 3)/3 + 0.35*math.Min(float64(imperative), 3)/3)

	// Recency: the latest request and the latest open work come first.
	latest := w.Latest
	if latest == "" && len(w.Goal) > 0 {
		latest = w.Goal[len(w.Goal)-1]
	}
	rec := 0.0
	if latest != "" && matches(d.body(latestSections), latest) {
		rec++
	}
	switch {
	case len(w.Next) > 0:
		first := nextItems
		if len(first) > 2 {
			first = first[:2]
		}
		if matches(norm(strings.Join(first, "\n")), w.Next[0]) {
			rec++
		}
	case len(w.InProgress) > 0:
		if matches(d.body(append(append([]string(nil), inProgressSections...), nextSections...)), w.InProgress[0]) {
			rec++
		}
	default:
		rec++
	}
	if staleCurrent == 0 {
		rec++
	}
	s.Dims["recency"] = rec / 3

	// Structure: Pi's exact headings, in order.
	want := historyHeadings
	if kind == Branch {
		want = branchHeadings
	}
	if split {
		if strings.HasPrefix(strings.TrimSpace(summary), "No prior history.") {
			want = turnPrefixHeadings
		} else {
			want = append(append([]string(nil), want...), turnPrefixHeadings...)
		}
	}
	present, pos, ordered := 0, 0, true
	for _, h := range want {
		i := indexOf(d.headings, h, 0)
		if i < 0 {
			continue
		}
		present++
		if i < pos {
			ordered = false
		}
		pos = i
	}
	exact := float64(present) / float64(len(want))
	structure := 0.8 * exact
	if ordered && present > 0 {
		structure += 0.2 * exact
	}
	s.Dims["structure"] = structure

	// Compression: a checkpoint, neither a copy nor a stub.
	sw, cw := len(words(source)), len(words(d.text))
	s.Dims["compression"] = lengthScore(sw, cw)

	for _, dim := range Dimensions {
		s.Raw += dim.Weight * s.Dims[dim.Key]
	}

	// Penalties.
	pen := func(name string, v float64) {
		if v > 0 {
			s.Penalties = append(s.Penalties, Penalty{name, math.Round(v*1e4) / 1e4})
		}
	}
	if len(open) > 0 {
		v := 0.20 * math.Min(1, float64(fabricated)/float64(len(open)))
		if claimRe.MatchString(d.text) {
			v = 0.20
		}
		pen("hallucinated_completion", v)
	}
	pen("contradiction", math.Min(0.20, 0.10*float64(staleCurrent)+0.05*float64(unfinished)))
	if len(w.Blocked) > 0 && blR < 1 && (blR == 0 || d.placeholderOnly("blocked")) {
		pen("missed_blocker", 0.12*(1-blR))
	}
	placeholders, counted := 0, 0
	for _, name := range placeholderSections {
		if kind == Branch && name == "critical context" {
			continue
		}
		if _, ok := d.sections[name]; !ok {
			continue
		}
		counted++
		if d.placeholderOnly(name) || (name == "next steps" && len(nextItems) == 0) {
			placeholders++
		}
	}
	switch {
	case cw < 25:
		pen("empty_or_generic", 0.30)
	case counted > 0 && float64(placeholders)/float64(counted) >= 0.8:
		pen("empty_or_generic", 0.30)
	case counted > 0 && float64(placeholders)/float64(counted) >= 0.65:
		pen("empty_or_generic", 0.15)
	}
	over := 0.0
	if sw > 400 && float64(cw) > overCopyRatio*float64(sw) {
		over = 0.12 * math.Min(1, (float64(cw)/float64(sw)-overCopyRatio)/overCopyRatio+0.25)
	}
	if cw > 200 && copiedShare(words(source), words(d.text)) >= 0.8 {
		over = math.Max(over, 0.06) // mostly pasted transcript
	}
	pen("over_copying", over)
	allFacts := concat(w.Goal, []string{w.Latest}, w.Constraints, w.Done, w.InProgress, w.Blocked, w.Next)
	factHits, factN := 0, 0
	for _, f := range allFacts {
		if f == "" {
			continue
		}
		factN++
		if matches(text, f) {
			factHits++
		}
	}
	factRecall := 1.0
	if factN > 0 {
		factRecall = float64(factHits) / float64(factN)
	}
	if structure >= 0.7 && factRecall < 0.1 && entRecall < 0.2 {
		pen("heading_only_generic", 0.16)
	}
	if structure >= 0.7 && (s.Dims["actionability"] < 0.2 || concrete == 0) && entRecall < 0.35 {
		pen("structured_but_vague", 0.10)
	}
	switch {
	case exact == 1:
	case exact >= 2.0/3:
		pen("missing_exact_pi_headings", 0.04)
	case exact >= 1.0/3:
		pen("missing_exact_pi_headings", 0.08)
	default:
		pen("missing_exact_pi_headings", 0.14)
	}
	if files < 0.35 && len(w.ReadFiles)+len(w.ModifiedFiles) > 0 {
		pen("missing_file_operation_tags", 0.08)
	}
	cont := 0.0
	low := strings.ToLower(d.text)
	for _, c := range continuation {
		if strings.Contains(low, c) {
			cont += 0.08
			break
		}
	}
	if speakerRe.MatchString(d.text) {
		cont += 0.08
	}
	pen("continues_conversation", cont)
	pen("harness_text", math.Min(0.12, 0.06*float64(len(noise))))
	if malformedRe.MatchString(d.text) {
		pen("malformed_or_encoded_output", 0.08)
	}
	pen("cut_entities", math.Min(0.09, 0.03*float64(broken)))
	if u := unsupported - broken; u >= 3 {
		pen("unsupported_entity_stuffing", math.Min(0.16, 0.04*float64(u)))
	}
	if entRecall > 0.45 && (s.Dims["progress"] < 0.35 || next < 0.35) {
		pen("entity_stuffing_without_state", 0.10)
	}
	total := s.Raw
	for _, p := range s.Penalties {
		total -= p.Value
	}
	s.Total = clamp(total)
	return s
}

// entityWhole reports whether e appears in text and is not cut right after it.
func entityWhole(text, e string) bool {
	for from := 0; ; {
		i := strings.Index(text[from:], e)
		if i < 0 {
			return false
		}
		end := from + i + len(e)
		if !strings.HasPrefix(text[end:], "…") {
			return true
		}
		from = end
	}
}

func indexOf(list []string, s string, from int) int {
	for i := from; i < len(list); i++ {
		if list[i] == s {
			return i
		}
	}
	return -1
}

func concat(lists ...[]string) []string {
	var out []string
	for _, l := range lists {
		out = append(out, l...)
	}
	return out
}

// lengthScore rates the summary's length against the source's, in words: a checkpoint
// is usually 4% to 20% of what it summarizes; a short source allows a fuller summary.
func lengthScore(source, summary int) float64 {
	if source == 0 {
		source = 1
	}
	if summary < 45 {
		return float64(summary) / 45 * 0.45
	}
	if source < 300 && summary < 450 {
		return 0.85
	}
	r := float64(summary) / float64(source)
	switch {
	case r >= 0.04 && r <= 0.20:
		return 1
	case r < 0.04:
		return clamp(r / 0.04)
	}
	return clamp(1 - (r-0.20)/0.35)
}

// copiedShare is the share of the summary's words that lie in a run of shingleSize words
// found as such in the source.
func copiedShare(source, summary []string) float64 {
	if len(summary) < shingleSize || len(source) < shingleSize {
		return 0
	}
	seen := map[string]bool{}
	for i := 0; i+shingleSize <= len(source); i++ {
		seen[strings.Join(source[i:i+shingleSize], " ")] = true
	}
	covered := make([]bool, len(summary))
	for i := 0; i+shingleSize <= len(summary); i++ {
		if seen[strings.Join(summary[i:i+shingleSize], " ")] {
			for j := i; j < i+shingleSize; j++ {
				covered[j] = true
			}
		}
	}
	n := 0
	for _, c := range covered {
		if c {
			n++
		}
	}
	return float64(n) / float64(len(summary))
}

// argValues are the string values of a tool call's arguments, nested ones included, in
// key order.
func argValues(raw json.RawMessage) []string {
	var v any
	if json.Unmarshal(raw, &v) != nil {
		return nil
	}
	var out []string
	jsonLeaves(v, nil, func(leaf any) { out = append(out, fmt.Sprint(leaf)) })
	return out
}

// jsonLeaves calls leaf with every string and number (float64) of a decoded JSON value,
// arrays in order and objects' members in key order, leaving out the members skip names
// (none when skip is nil).
func jsonLeaves(v any, skip func(key string) bool, leaf func(any)) {
	switch v := v.(type) {
	case string, float64:
		leaf(v)
	case []any:
		for _, x := range v {
			jsonLeaves(x, skip, leaf)
		}
	case map[string]any:
		keys := make([]string, 0, len(v))
		for k := range v {
			keys = append(keys, k)
		}
		sort.Strings(keys)
		for _, k := range keys {
			if skip == nil || !skip(k) {
				jsonLeaves(v[k], skip, leaf)
			}
		}
	}
}
