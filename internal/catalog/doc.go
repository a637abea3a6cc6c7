// Package catalog is Pi 1.6.0's model catalog and credential resolution, read the way the
// user's pi reads them, so that pi-lsp summarizes with the model and key the user already
// set up in Pi:
//
//   - the built-in providers and models: those of the user's installed pi (the generated
//     model data of the @earendil-works/pi-ai package next to the pi found on PATH), else the
//     copy generated from Pi 1.6.0 and embedded here (pi-catalog.json, written by
//     scripts/gen-pi-catalog.mjs; scripts/pi-next.sh regenerates it for a new Pi);
//   - <agentDir>/models.json over them: built-in providers changed (baseUrl, headers, compat,
//     modelOverrides), custom providers, models upserted, per-model api overrides, as
//     pi-coding-agent's provider-composer does;
//   - the session's model (Select): its newest model_change or assistant message on the
//     path, then defaultProvider/defaultModel of settings.json, each used only when its
//     provider has credentials, and the thinking level clamped to the model;
//   - the credentials (Resolve), in Pi's order: a credential saved in auth.json (resolved
//     through the user's `pi auth print-api-key` / `pi auth print-bearer-token`, which
//     refresh account logins themselves; auth.json is never written), the models.json apiKey
//     (a literal, "$NAME"/"${NAME}" interpolation or "!command" output), then the provider's
//     environment variables; models.json headers resolve the same way.
//
// Invariant: a credential is never logged, never part of an error text, and never written
// anywhere; a Credential's Source says where it came from in words a user can act on.
package catalog
