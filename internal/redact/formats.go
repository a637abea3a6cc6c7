package redact

// formats is the table of token formats with a distinctive prefix, as data: each row is
// one format, its description, the literals a match starts with (the prefilter's
// keywords) and the pattern that runs from there. The selection follows the default
// rule set of gitleaks (the row's id is the gitleaks rule it corresponds to, where
// there is one), restricted to the formats a coding session may meet whose prefix alone
// tells them apart, so that no context is needed and no ordinary word matches; the
// patterns are written here, from the providers' documented formats, and where gitleaks
// asks for an exact length this table asks for at least that length, so that a token
// cut short by a summary's "…" or run into other characters is still redacted whole.
// Formats gitleaks recognises only by a nearby word ("cloudflare", "datadog", ...) are
// covered by the assignment rules (assign.go) when the word names a key, token or
// secret.
var formats = []format{
	prefixed("age-secret-key", "age encryption secret keys (bech32)", []string{"AGE-SECRET-KEY-1"}, `AGE-SECRET-KEY-1[QPZRY9X8GF2TVDW0S3JN54KHCE6MUA7L]{58}`),
	prefixed("1password-service-account-token", "1Password service account tokens", []string{"ops_eyJ"}, `ops_eyJ[A-Za-z0-9+/]{250,}={0,3}`),
	prefixed("1password-secret-key", "1Password account secret keys", []string{"A3-"}, `A3-[A-Z0-9]{6}-(?:[A-Z0-9]{11}|[A-Z0-9]{6}-[A-Z0-9]{5})-[A-Z0-9]{5}-[A-Z0-9]{5}-[A-Z0-9]{5}`),
	prefixed("adobe-client-secret", "Adobe OAuth client secrets", []string{"p8e-"}, `p8e-[A-Za-z0-9]{32,}`),
	prefixed("alibaba-access-key-id", "Alibaba Cloud AccessKey ids", []string{"LTAI"}, `LTAI[A-Za-z0-9]{20,}`),
	prefixed("artifactory-api-key", "JFrog Artifactory API keys", []string{"AKCp"}, `AKCp[A-Za-z0-9]{69,}`),
	prefixed("artifactory-reference-token", "JFrog Artifactory reference tokens", []string{"cmVmd"}, `cmVmd[A-Za-z0-9]{59}\b`),
	prefixed("aws-bedrock-api-key", "Amazon Bedrock API keys, long-lived (ABSK) and short-lived", []string{"ABSK", "bedrock-api-key-"},
		`(?:ABSK[A-Za-z0-9+/]{109,269}={0,2}|bedrock-api-key-YmVkcm9jay5hbWF6b25hd3MuY29t[A-Za-z0-9+/=%]*)`),
	prefixed("clickhouse-cloud-api-secret-key", "ClickHouse Cloud API secret keys", []string{"4b1d"}, `4b1d[A-Za-z0-9]{38}\b`),
	prefixed("clojars-api-token", "Clojars deploy tokens", []string{"clojars_"}, ci("clojars_")+`[A-Za-z0-9]{60}`).folded(),
	prefixed("cloudflare-origin-ca-key", "Cloudflare Origin CA keys", []string{"v1.0-"}, `v1\.0-[a-f0-9]{24}-[a-f0-9]{146}`),
	prefixed("databricks-api-token", "Databricks personal access tokens", []string{"dapi"}, `dapi[a-f0-9]{32}(?:-\d)?`),
	prefixed("doppler-api-token", "Doppler personal, service, service-account, CLI, SCIM and audit tokens", []string{"dp.pt.", "dp.st.", "dp.sa.", "dp.ct.", "dp.scim.", "dp.audit."},
		`dp\.(?:pt|st|sa|ct|scim|audit)\.[A-Za-z0-9._-]{40,}`),
	prefixed("duffel-api-token", "Duffel API tokens", []string{"duffel_test_", "duffel_live_"}, `duffel_(?:test|live)_[A-Za-z0-9_=-]{43,}`),
	prefixed("dynatrace-api-token", "Dynatrace API tokens", []string{"dt0c01."}, `dt0c01\.[A-Za-z0-9]{24}\.[A-Za-z0-9]{64}`),
	prefixed("easypost-api-token", "EasyPost production and test API keys", []string{"EZAK", "EZTK"}, `EZ[AT]K[A-Za-z0-9]{54}`),
	prefixed("facebook-page-access-token", "Facebook page and user access tokens", []string{"EAAM", "EAAC"}, `EAA[MC][A-Za-z0-9]{100,}`),
	prefixed("flutterwave-secret-key", "Flutterwave secret and encryption keys", []string{"FLWSECK"}, `FLWSECK(?:_TEST)?-[a-hA-H0-9]{12,}(?:-X)?`),
	prefixed("flyio-access-token", "Fly.io access and macaroon tokens", []string{"fo1_", "fm1a_", "fm1r_", "fm2_"},
		`(?:fo1_[A-Za-z0-9_-]{43}|fm1[ar]_[A-Za-z0-9+/]{100,}={0,3}|fm2_[A-Za-z0-9+/]{100,}={0,3})`),
	prefixed("frameio-api-token", "Frame.io API tokens", []string{"fio-u-"}, `fio-u-[A-Za-z0-9_=-]{64,}`),
	prefixed("gitlab-session-cookie", "GitLab session cookies (the cookie's name stays)", []string{"_gitlab_session="}, `_gitlab_session=(?P<s>[0-9a-z]{32,})`),
	prefixed("grafana-api-key", "Grafana API keys (base64 JSON starting {\"k\":)", []string{"eyJrIjoi"}, `eyJrIjoi[A-Za-z0-9]{70,400}={0,3}`),
	prefixed("grafana-cloud-api-token", "Grafana Cloud API tokens", []string{"glc_"}, `glc_[A-Za-z0-9+/]{32,400}={0,3}`),
	prefixed("grafana-service-account-token", "Grafana service account tokens", []string{"glsa_"}, `glsa_[A-Za-z0-9]{32}_[A-Fa-f0-9]{8}`),
	prefixed("harness-api-key", "Harness personal and service account tokens", []string{"pat.", "sat."}, `(?:pat|sat)\.[A-Za-z0-9_-]{22}\.[A-Za-z0-9]{24}\.[A-Za-z0-9]{20}`),
	prefixed("heroku-api-key-v2", "Heroku API keys", []string{"HRKU-AA"}, `HRKU-AA[0-9A-Za-z_-]{58}`),
	prefixed("huggingface-organization-api-token", "Hugging Face organization API tokens", []string{"api_org_"}, `api_org_[A-Za-z]{34}`),
	prefixed("infracost-api-token", "Infracost API tokens", []string{"ico-"}, `ico-[A-Za-z0-9]{32}`),
	prefixed("intra42-client-secret", "42 intranet client secrets", []string{"s-s4t2ud-", "s-s4t2af-"}, `s-s4t2(?:ud|af)-[a-f0-9]{64}`),
	prefixed("linear-api-key", "Linear API keys", []string{"lin_api_"}, `lin_api_[A-Za-z0-9]{40}`),
	prefixed("new-relic-key", "New Relic user API, insert and browser keys", []string{"NRAK-", "NRII-", "NRJS-"}, `(?:NRAK-[A-Z0-9]{27}|NRII-[A-Za-z0-9-]{32}|NRJS-[a-f0-9]{19})`),
	prefixed("notion-api-token", "Notion integration tokens", []string{"ntn_"}, `ntn_[0-9]{11}[A-Za-z0-9]{35}`),
	prefixed("openshift-user-token", "OpenShift user tokens", []string{"sha256~"}, `sha256~[A-Za-z0-9_-]{43}`),
	prefixed("perplexity-api-key", "Perplexity API keys", []string{"pplx-"}, `pplx-[A-Za-z0-9]{48}`),
	prefixed("planetscale-token", "PlanetScale API and OAuth tokens and passwords", []string{"pscale_tkn_", "pscale_oauth_", "pscale_pw_"}, `pscale_(?:tkn|oauth|pw)_[A-Za-z0-9_=.-]{32,64}`),
	prefixed("postman-api-token", "Postman API keys", []string{"PMAK-"}, `PMAK-[a-fA-F0-9]{24}-[a-fA-F0-9]{34}`),
	prefixed("prefect-api-token", "Prefect API keys", []string{"pnu_"}, `pnu_[A-Za-z0-9]{36}`),
	prefixed("pulumi-api-token", "Pulumi access tokens", []string{"pul-"}, `pul-[a-f0-9]{40}`),
	prefixed("readme-api-token", "ReadMe API keys", []string{"rdme_"}, `rdme_[a-z0-9]{70}`),
	prefixed("rubygems-api-token", "RubyGems API keys", []string{"rubygems_"}, `rubygems_[a-f0-9]{48}`),
	prefixed("scalingo-api-token", "Scalingo API tokens", []string{"tk-us-"}, `tk-us-[A-Za-z0-9_-]{48}`),
	prefixed("sendinblue-api-token", "Brevo (Sendinblue) API keys", []string{"xkeysib-"}, `xkeysib-[a-f0-9]{64}-[A-Za-z0-9]{16}`),
	prefixed("sentry-token", "Sentry user auth tokens and organization tokens", []string{"sntryu_", "sntrys_eyJ"}, `(?:sntryu_[a-f0-9]{64}|sntrys_eyJ[A-Za-z0-9+/=]{50,}(?:_[A-Za-z0-9+/]{43})?)`),
	prefixed("settlemint-token", "SettleMint personal, application and service access tokens", []string{"sm_pat_", "sm_aat_", "sm_sat_"}, `sm_[pas]at_[A-Za-z0-9]{16}`),
	prefixed("shippo-api-token", "Shippo API tokens", []string{"shippo_live_", "shippo_test_"}, `shippo_(?:live|test)_[a-fA-F0-9]{40}`),
	prefixed("square-access-token", "Square access tokens and OAuth secrets", []string{"EAAA", "sq0atp-", "sq0csp-"}, `(?:EAAA[A-Za-z0-9_-]{22,60}|sq0atp-[A-Za-z0-9_-]{22,60}|sq0csp-[A-Za-z0-9_-]{43})`),
	prefixed("twilio-api-key", "Twilio API key SIDs", []string{"SK"}, `SK[0-9a-fA-F]{32}\b`),
	prefixed("typeform-api-token", "Typeform personal access tokens", []string{"tfp_"}, `tfp_[A-Za-z0-9_.=-]{59}`),
	prefixed("vault-token", "HashiCorp Vault service, batch and recovery tokens", []string{"hvs.", "hvb.", "hvr."}, `hv[sbr]\.[A-Za-z0-9_-]{90,300}`),
	// Formats of the same kind that the gitleaks rule set does not carry, from the
	// providers' documentation: model providers a coding agent is set up with, Google
	// OAuth, chat webhooks.
	prefixed("groq-api-key", "Groq API keys", []string{"gsk_"}, `gsk_[A-Za-z0-9]{48,}`),
	prefixed("xai-api-key", "xAI API keys", []string{"xai-"}, `xai-[A-Za-z0-9]{70,}`),
	prefixed("google-oauth-client-secret", "Google OAuth client secrets", []string{"GOCSPX-"}, `GOCSPX-[A-Za-z0-9_-]{28}`),
	prefixed("google-oauth-token", "Google OAuth access tokens", []string{"ya29."}, `ya29\.[A-Za-z0-9_-]{60,}`),
	prefixed("telegram-bot-token", "Telegram bot tokens in Bot API URLs (the host stays)", []string{"api.telegram.org/bot"}, `api\.telegram\.org/bot(?P<s>[0-9]{5,16}:[A-Za-z0-9_-]{34,})`),
	prefixed("discord-webhook", "Discord webhook URLs (the host stays)", []string{"discord.com/api/webhooks/", "discordapp.com/api/webhooks/"},
		`discord(?:app)?\.com/api/webhooks/(?P<s>[0-9]{17,20}/[A-Za-z0-9_-]{60,})`),
	prefixed("microsoft-teams-webhook", "Microsoft Teams incoming webhook URLs (the host stays)", []string{"webhook.office.com/webhookb2/"},
		`webhook\.office\.com/webhookb2/(?P<s>[A-Za-z0-9@/-]{100,})`),
}

// prefixed is a row of formats.
func prefixed(id Kind, description string, keywords []string, pattern string) format {
	return format{id: id, description: description, keywords: keywords, pattern: pattern}
}

// folded is f with its keywords matched in any ASCII case.
func (f format) folded() format { f.fold = true; return f }

// format is one row of formats.
type format struct {
	id          Kind
	description string
	// keywords are the literals a match starts with (lowercase when fold is set).
	keywords []string
	// pattern runs from a keyword; its group "s", when present, is the secret.
	pattern string
	// fold: the keywords match in any ASCII case (the pattern spells them with ci).
	fold bool
	// accept, when set, narrows the pattern's matches (see rule.accept); quick is a
	// cheap test run before the pattern (see rule.quick).
	accept func(s string, i int, secret string, g func(name string) string) bool
	quick  func(s string, i int) bool
	// value, when set, reads the secret after the pattern's match (see rule.value).
	value func(s string, i int) int
	// window bounds the length of a match (see rule.window).
	window int
	// repeat: one match may hold several secrets (see rule.repeat).
	repeat bool
}

// rule is the format as a rule of the table: a match must start a word (no letter,
// digit or _ before it), unless the format's secret is only part of its match (a URL's
// path, a cookie's value).
func (f format) rule() rule {
	r := re(f.pattern)
	return rule{kind: f.id, description: f.description, anchors: f.keywords, fold: f.fold, wordStart: len(secretGroups(r)) == 0 && f.value == nil, re: r,
		accept: f.accept, quick: f.quick, window: f.window, value: f.value, repeat: f.repeat}
}
