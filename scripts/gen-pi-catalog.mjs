// Writes Pi's built-in model catalog as pi-lsp embeds it (internal/catalog/pi-catalog.json):
// every built-in provider of @earendil-works/pi-ai with its chat models, as that package
// builds them, and how its API key is found in the environment.
//
//   node scripts/gen-pi-catalog.mjs [PI_AI_DIR] > internal/catalog/pi-catalog.json
//
// PI_AI_DIR defaults to .tools/pi-current/node_modules/@earendil-works/pi-ai (Pi 1.6.0, from
// scripts/install-pi.sh); run it with the Node 22 installed there. scripts/pi-next.sh runs it
// against the next Pi to show how the catalog moves. The output is data generated from the
// npm package: do not edit it by hand.
import { readFileSync } from "node:fs";
import { dirname, join, resolve } from "node:path";
import { fileURLToPath, pathToFileURL } from "node:url";

const repo = resolve(dirname(fileURLToPath(import.meta.url)), "..");
const dir = resolve(process.argv[2] ?? join(repo, ".tools/pi-current/node_modules/@earendil-works/pi-ai"));
const pkg = JSON.parse(readFileSync(join(dir, "package.json"), "utf8"));
const { builtinProviders } = await import(pathToFileURL(join(dir, "dist/providers/all.js")).href);

// How a provider's API-key method reads the environment: each variable it asks for, in its
// order, and what a value in that variable alone becomes (an API key, a bearer header, or
// something pi-lsp does not reproduce, such as a part of an ambient cloud credential).
async function envOf(auth) {
	if (!auth) return { env: [], custom: false };
	const signal = new AbortController().signal;
	const asked = [];
	const probe = async (only) => {
		try {
			return await auth.resolve({
				ctx: {
					env: async (name) => {
						if (only === undefined) asked.push(name);
						return name === only ? "PROBE" : undefined;
					},
					fileExists: async () => false,
				},
				credential: undefined,
				signal,
			});
		} catch {
			return { error: true };
		}
	};
	await probe(undefined);
	const env = [];
	let custom = false;
	for (const name of asked) {
		const r = await probe(name);
		const headers = r?.auth?.headers ?? {};
		const onlyKey = r?.auth?.apiKey === "PROBE" && !r.env && !r.auth.baseUrl && Object.keys(headers).length === 0;
		const bearer = !r?.auth?.apiKey && headers.Authorization === "Bearer PROBE" && Object.keys(headers).length === 1;
		if (onlyKey) env.push({ name, as: "apiKey" });
		else if (bearer) env.push({ name, as: "bearer" });
		else custom = true;
	}
	return { env, custom };
}

const providers = [];
for (const p of builtinProviders()) {
	const { env, custom } = await envOf(p.auth.apiKey);
	const models = p.getModels().map((m) => {
		const { inputLimits, type, ...rest } = m;
		return rest;
	});
	providers.push({
		id: p.id,
		name: p.name,
		...(p.baseUrl ? { baseUrl: p.baseUrl } : {}),
		...(p.headers ? { headers: p.headers } : {}),
		apiKey: !!p.auth.apiKey,
		...(p.auth.oauth ? { oauth: p.auth.oauth.name } : {}),
		env,
		...(custom ? { customAuth: true } : {}),
		models,
	});
}
providers.sort((a, b) => (a.id < b.id ? -1 : a.id > b.id ? 1 : 0));
// One model a line, so that a new Pi's catalog diffs model by model.
const lines = [`{"piAi":${JSON.stringify(pkg.version)},"providers":[`];
providers.forEach((p, i) => {
	const { models, ...head } = p;
	lines.push(`${JSON.stringify(head).slice(0, -1)},"models":[`);
	models.forEach((m, j) => lines.push(`${JSON.stringify(m)}${j < models.length - 1 ? "," : ""}`));
	lines.push(`]}${i < providers.length - 1 ? "," : ""}`);
});
lines.push("]}");
process.stdout.write(`${lines.join("\n")}\n`);
