package secrets

import "strings"

const (
	digits   = "0123456789"
	lowerAN  = "abcdefghijklmnopqrstuvwxyz0123456789"
	bech32Up = "QPZRY9X8GF2TVDW0S3JN54KHCE6MUA7L"
	letters  = "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz"
)

// planted is a Secret whose line is before + value + after, redacted as kind.
func planted(kind, before, value, after string) Secret {
	return Secret{Kind: kind, Value: value, Use: before + value + after, Redacted: before + "[redacted: " + kind + "]" + after}
}

// FormatSecrets are one planted token of each format of internal/redact's data table,
// each in a line of a coding session (a shell, a config file, a request).
func FormatSecrets() []Secret {
	return []Secret{
		planted("age-secret-key", "# created: 2024-01-01\n", tok("AGE-SECRET-KEY-1", 58, bech32Up), "\n"),
		planted("1password-service-account-token", "export OP_SERVICE_ACCOUNT_TOKEN=", tok("ops_eyJ", 300, alnum), ""),
		planted("1password-secret-key", "secret key: ", "A3-"+tok("", 6, upper)+"-"+tok("x", 11, upper)[1:]+"-"+tok("y", 5, upper)[1:]+"-"+tok("z", 5, upper)[1:]+"-"+tok("w", 5, upper)[1:], " (emergency kit)"),
		planted("adobe-client-secret", "ADOBE_CLIENT_SECRET=", tok("p8e-", 32, alnum), ""),
		planted("alibaba-access-key-id", "aliyun configure --access-key-id ", tok("LTAI", 20, alnum), " --region cn-hangzhou"),
		planted("artifactory-api-key", "curl -H 'X-JFrog-Art-Api: ", tok("AKCp", 69, alnum), "' https://art.example.com"),
		planted("artifactory-reference-token", "ARTIFACTORY_REF=", tok("cmVmd", 59, alnum), ""),
		planted("aws-bedrock-api-key", "export AWS_BEARER_TOKEN_BEDROCK=", tok("ABSK", 132, b64), ""),
		planted("clickhouse-cloud-api-secret-key", "clickhouse secret ", tok("4b1d", 38, alnum), " created"),
		planted("clojars-api-token", "CLOJARS_TOKEN ", tok("CLOJARS_", 60, lowerAN), ""),
		planted("cloudflare-origin-ca-key", "origin ca key: ", "v1.0-"+tok("", 24, hexLow)+"-"+tok("c", 146, hexLow)[1:], ""),
		planted("databricks-api-token", "databricks configure --token ", tok("dapi", 32, hexLow), ""),
		planted("doppler-api-token", "DOPPLER_TOKEN=", tok("dp.pt.", 43, alnum), ""),
		planted("duffel-api-token", "Duffel key ", tok("duffel_test_", 43, alnum), " works"),
		planted("dynatrace-api-token", "Api-Token ", "dt0c01."+tok("", 24, upper)+"."+tok("d", 64, upper)[1:], ""),
		planted("easypost-api-token", "EasyPost.api_key = ", tok("EZAK", 54, alnum), ""),
		planted("facebook-page-access-token", "page token ", tok("EAAC", 120, alnum), " expires"),
		planted("flutterwave-secret-key", "FLW secret ", tok("FLWSECK_TEST-", 32, hexLow)+"-X", ""),
		planted("flyio-access-token", "FLY_API_TOKEN=", tok("fo1_", 43, b64url), ""),
		planted("frameio-api-token", "frame.io token ", tok("fio-u-", 64, alnum), ""),
		planted("gitlab-session-cookie", "Cookie: _gitlab_session=", tok("", 32, lowerAN), "; path=/"),
		planted("grafana-api-key", "grafana key ", tok("eyJrIjoi", 80, alnum), ""),
		planted("grafana-cloud-api-token", "GRAFANA_CLOUD ", tok("glc_", 64, alnum), ""),
		planted("grafana-service-account-token", "grafana sa ", tok("glsa_", 32, alnum)+"_"+tok("g", 8, hexLow)[1:], ""),
		planted("harness-api-key", "x-api-key harness ", "pat."+tok("", 22, alnum)+"."+tok("h", 24, alnum)[1:]+"."+tok("i", 20, alnum)[1:], ""),
		planted("heroku-api-key-v2", "HEROKU ", tok("HRKU-AA", 58, b64url), ""),
		planted("huggingface-organization-api-token", "hf org ", tok("api_org_", 34, letters), ""),
		planted("infracost-api-token", "infracost configure set api_key ", tok("ico-", 32, alnum), ""),
		planted("intra42-client-secret", "42 secret ", tok("s-s4t2ud-", 64, hexLow), ""),
		planted("linear-api-key", "LINEAR ", tok("lin_api_", 40, alnum), ""),
		planted("new-relic-key", "NEW_RELIC ", tok("NRAK-", 27, upper), ""),
		planted("notion-api-token", "notion ", "ntn_"+tok("", 11, digits)+tok("n", 35, alnum)[1:], ""),
		planted("openshift-user-token", "oc login --token=", tok("sha256~", 43, b64url), " --server=https://api.example.com:6443"),
		planted("perplexity-api-key", "PPLX ", tok("pplx-", 48, alnum), ""),
		planted("planetscale-token", "pscale ", tok("pscale_tkn_", 43, alnum), ""),
		planted("postman-api-token", "postman ", "PMAK-"+tok("", 24, hexLow)+"-"+tok("p", 34, hexLow)[1:], ""),
		planted("prefect-api-token", "prefect cloud login -k ", tok("pnu_", 36, alnum), ""),
		planted("pulumi-api-token", "PULUMI ", tok("pul-", 40, hexLow), ""),
		planted("readme-api-token", "readme ", tok("rdme_", 70, lowerAN), ""),
		planted("rubygems-api-token", ":rubygems_api_key: ", tok("rubygems_", 48, hexLow), ""),
		planted("scalingo-api-token", "scalingo ", tok("tk-us-", 48, b64url), ""),
		planted("sendinblue-api-token", "brevo ", tok("xkeysib-", 64, hexLow)+"-"+tok("q", 16, alnum)[1:], ""),
		planted("sentry-token", "SENTRY ", tok("sntryu_", 64, hexLow), ""),
		planted("settlemint-token", "settlemint ", tok("sm_pat_", 16, alnum), ""),
		planted("shippo-api-token", "shippo ", tok("shippo_live_", 40, hexLow), ""),
		planted("square-access-token", "square ", tok("sq0atp-", 22, b64url), ""),
		planted("twilio-api-key", "twilio api:core:keys ", tok("SK", 32, hexLow), ""),
		planted("typeform-api-token", "typeform ", tok("tfp_", 59, alnum), ""),
		planted("vault-token", "VAULT ", tok("hvs.", 95, b64url), ""),
		planted("groq-api-key", "GROQ ", tok("gsk_", 52, alnum), ""),
		planted("xai-api-key", "XAI ", tok("xai-", 80, alnum), ""),
		planted("google-oauth-client-secret", `"client_id": "x.apps.googleusercontent.com", "installed": `, tok("GOCSPX-", 28, b64url), ""),
		planted("google-oauth-token", "gcloud said ", tok("ya29.", 100, b64url), ""),
		planted("telegram-bot-token", "curl https://api.telegram.org/bot", tok("", 10, digits)+":"+tok("t", 35, b64url)[1:], "/getMe"),
		planted("discord-webhook", "POST https://discord.com/api/webhooks/", tok("", 18, digits)+"/"+tok("w", 68, b64url)[1:], ""),
		planted("microsoft-teams-webhook", "https://contoso.webhook.office.com/webhookb2/",
			tok("", 8, hexLow)+"-0000-0000-0000-"+tok("m", 12, hexLow)[1:]+"@"+tok("o", 8, hexLow)[1:]+"-0000-0000-0000-"+tok("k", 12, hexLow)[1:]+
				"/IncomingWebhook/"+tok("l", 32, hexLow)[1:]+"/"+tok("u", 8, hexLow)[1:]+"-0000-0000-0000-"+tok("v", 12, hexLow)[1:], ""),
	}
}

// password is a plausible password: letters, digits and a symbol.
func password(seed string) string {
	return tok(seed, 10, alnum)[len(seed):] + "#" + tok(seed+"2", 4, digits)[len(seed)+1:]
}

// IssueForms are the forms of secret named by what holds them (the name of a variable, a
// key of a config file, a flag, a client's password argument), each in the line of a
// session where it is met.
func IssueForms() []Secret {
	pw := func(n int) string { return password(strings.Repeat("p", n)) }
	return []Secret{
		planted("password-assignment", "DB_PASSWORD=", pw(1), "\nDB_HOST=localhost"),
		planted("password-assignment", "  database:\n    user: app\n    password: ", pw(2), "\n    port: 5432"),
		planted("password-assignment", "PGPASSWORD=", pw(3), " psql -h db -U app"),
		planted("password-assignment", "Server=db.internal;Database=app;User Id=sa;Password=", pw(4), ";Encrypt=true"),
		planted("password-assignment", "machine api.example.com login deploy password ", pw(5), "\n"),
		planted("password-assignment", "mongosh --username admin --password ", pw(6), " mongodb.internal"),
		planted("password-assignment", "spring.datasource.password=", pw(7), ""),
		planted("password-assignment", `{"username": "admin", "passwd": "`, pw(8), `"}`),
		planted("password-assignment", `{\"db\":{\"password\":\"`, pw(9), `\"}}`),
		planted("secret-assignment", "export TOKEN=", tok("", 40, hexLow), ""),
		planted("secret-assignment", "GITHUB_AUTH_TOKEN=", tok("", 30, alnum), " ./release.sh"),
		planted("secret-assignment", "DefaultEndpointsProtocol=https;AccountName=store;AccountKey=", tok("", 86, b64)+"==", ";EndpointSuffix=core.windows.net"),
		planted("secret-assignment", "Endpoint=sb://ns.servicebus.windows.net/;SharedAccessKeyName=RootManageSharedAccessKey;SharedAccessKey=", tok("sak", 44, b64)[3:], ""),
		planted("secret-assignment", "SECRET_KEY = '", "django-insecure-"+tok("dj", 40, alnum+"#!^")[2:], "'"),
		planted("secret-assignment", "production:\n  secret_key_base: ", tok("", 128, hexLow), "\n"),
		planted("secret-assignment", "app.config['SECRET_KEY'] = '", tok("flask", 32, alnum)[5:], "'"),
		planted("secret-assignment", "app.secret_key = \"", tok("flask2", 24, alnum)[6:], "\""),
		planted("secret-assignment", `  "type": "service_account",\n  "private_key_id": "`, tok("pk", 40, hexLow)[2:], `",`),
		planted("secret-assignment", `"client_secret": "`, tok("cs", 35, b64url)[2:], `",`),
		planted("secret-assignment", `"refresh_token": "`, "1//0"+tok("rt", 60, b64url)[2:], `"`),
		planted("secret-assignment", "aws_session_token = ", tok("st", 120, b64)[2:], "\n"),
		planted("secret-assignment", "APP_KEY=", "base64:"+tok("lv", 43, b64)[2:]+"=", ""),
		planted("secret-assignment", "//registry.example.com/:_auth=", tok("na", 32, b64)[2:]+"==", ""),
		planted("secret-assignment", "terraform apply -var api_key=", tok("tf", 32, hexLow)[2:], ""),
		planted("secret-assignment", "heroku config:set STRIPE_WEBHOOK_SECRET=", tok("hs", 32, alnum)[2:], " -a shop"),
		planted("secret-assignment", "./deploy --api-key ", tok("dk", 32, alnum)[2:], " --env prod"),
		planted("secret-assignment", "const accessToken = \"", tok("at", 40, alnum)[2:], "\";"),
		planted("cli-password", "mysql -u root -p", pw(10), " app < dump.sql"),
		planted("cli-password", "mysqldump -h db -uroot -p'", pw(11), "' shop > shop.sql"),
		planted("cli-password", "sshpass -p '", pw(12), "' ssh deploy@10.0.0.5 uptime"),
		planted("cli-password", "docker login -u ci -p ", pw(13), " registry.example.com"),
		planted("cli-password", "redis-cli -h cache -a ", pw(14), " ping"),
		planted("cli-password", "curl -u admin:", pw(15), " https://jenkins.example.com/api/json"),
	}
}
