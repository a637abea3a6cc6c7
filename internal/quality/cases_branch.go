package quality

// Branch summaries: the branch being left is summarized without its tool results (Pi's
// branch preparation drops them), so outcomes are in the assistant's words and in user
// commands' output, and a call without a shown result is not unfinished work.

func branchCases() []*Case {
	return []*Case{
		branchTo("fork", "branch-cache-experiment", "an experiment on a branch (an in-process cache instead of Redis), measured and abandoned", func(s *Script) {
			s.User("Our product API calls Redis for every product lookup. Let's try replacing it with an in-process cache (ristretto) on a branch and measure. Keep the cache.Cache interface.")
			s.Say("OK. I'll keep `cache.Cache` as the interface and add a ristretto implementation behind it, then compare with `make bench-products`.")
			s.Mark("fork")
			s.User("Go ahead with the ristretto version. Keep the cache.Cache interface as it is.")
			s.Do("Adding the implementation.", Write("internal/cache/ristretto.go", "package cache\n\n// Local is an in-process Cache backed by ristretto.\ntype Local struct{ c *ristretto.Cache }\n\nfunc NewLocal(maxCost int64) (*Local, error) {\n\tc, err := ristretto.NewCache(&ristretto.Config{NumCounters: maxCost * 10, MaxCost: maxCost, BufferItems: 64})\n\treturn &Local{c: c}, err\n}\n"),
				Edit("cmd/api/main.go", "\tc := cache.NewRedis(cfg.RedisURL)", "\tc, err := cache.NewLocal(1 << 30)\n\tif err != nil {\n\t\tlog.Fatal(err)\n\t}"))
			s.Do("Running the product benchmark against both.", Sh("make bench-products", "BenchmarkProductLookup/redis-8   \t  200000\t     11874 ns/op\nBenchmarkProductLookup/local-8   \t 5000000\t       236 ns/op\nRSS after warmup: redis 210MB, local 1.84GB"))
			s.Say("Measured with `make bench-products`: lookups take 236 ns with ristretto against 11,874 ns with Redis (about 50x faster), but the process RSS grows from 210MB to 1.84GB after warm-up, because every API replica now holds the whole catalogue. With 12 replicas that is about 22GB of memory in total, and invalidation across replicas would still need Redis pub/sub.")
			s.User("That memory cost isn't worth it. Let's go back and keep Redis.")
		}, Expect{
			Goal:          []string{"ristretto | in-process cache"},
			Constraints:   []string{"cache.cache & interface"},
			Done:          []string{"ristretto.go | ristretto implementation", "236 ns | 1.84gb"},
			Next:          []string{"redis"},
			Entities:      []string{"internal/cache/ristretto.go", "make bench-products", "1.84GB", "cmd/api/main.go"},
			ModifiedFiles: []string{"cmd/api/main.go", "internal/cache/ristretto.go"},
		}),
		branchTo("fork", "branch-gorm-upgrade-failed", "an upgrade attempt on a branch that fails to build; the user abandons it", func(s *Script) {
			s.User("Evaluate upgrading gorm v1 (github.com/jinzhu/gorm) to gorm v2 (gorm.io/gorm) in the billing service.")
			s.Say("I'll try it on a branch and see how much breaks.")
			s.Mark("fork")
			s.User("Try it.")
			s.Do("Switching the module and rewriting imports.", Sh("go get gorm.io/gorm@v1.25.12 gorm.io/driver/postgres@v1.5.9 && go mod tidy", "go: added gorm.io/gorm v1.25.12\ngo: added gorm.io/driver/postgres v1.5.9"),
				Sh("gofmt -r '\"github.com/jinzhu/gorm\" -> \"gorm.io/gorm\"' -l -w ./...", "models/invoice.go\nmodels/customer.go\nstore/db.go"))
			s.Do("Building.", Sh("go build ./... 2>&1 | tail -4", "models/invoice.go:44:12: db.Model(inv).Related undefined (type *gorm.DB has no field or method Related)\nstore/db.go:19:9: cannot use gorm.Open(\"postgres\", dsn) (value of type *gorm.DB) as gorm.Dialector value in argument\nstore/db.go:27:4: db.LogMode undefined\ntoo many errors"))
			s.Say("The build fails with 37 errors across models/ and store/: `Related` is gone (v2 uses `Association`), `gorm.Open` takes a dialector (`postgres.Open(dsn)`), and `LogMode` became a logger config (first errors in `models/invoice.go` and `store/db.go`). models/ has 14 uses of `Related` alone, so this is a multi-day change, not a quick upgrade. The branch is left with a broken build.")
			s.User("Too big for now. Abandon it.")
		}, Expect{
			Goal:     []string{"gorm"},
			Done:     []string{"gorm.io/gorm"},
			Blocked:  []string{"37 errors | build fails"},
			Next:     []string{"abandon | revisit | association | postgres.open"},
			Entities: []string{"gorm.io/gorm", "models/invoice.go", "store/db.go", "Related", "postgres.Open(dsn)"},
		}),
		branchTo("fork", "branch-nested-summary", "a branch that holds an earlier branch summary, then more work and a verdict", func(s *Script) {
			s.User("The image thumbnails are slow to generate. Find a faster approach for thumbnail/resize.go.")
			s.Say("I'll compare a couple of approaches.")
			s.Mark("fork")
			s.User("Try libvips through govips.")
			s.Mark("vips-start")
			s.Do("Adding a govips resizer.", Write("thumbnail/vips.go", "package thumbnail\n\nfunc ResizeVips(src []byte, w int) ([]byte, error) {\n\timg, err := vips.NewImageFromBuffer(src)\n\tif err != nil {\n\t\treturn nil, err\n\t}\n\tdefer img.Close()\n\tif err := img.Thumbnail(w, 0, vips.InterestingNone); err != nil {\n\t\treturn nil, err\n\t}\n\tb, _, err := img.ExportJpeg(vips.NewJpegExportParams())\n\treturn b, err\n}\n"))
			s.Say("govips is 6x faster than the current `image/draw` path in `thumbnail/resize.go` but needs libvips 8.15 in the runtime image.")
			s.Mark("vips-end")
			s.From("fork")
			s.BranchSummary("The user explored a different conversation branch before returning here.\nSummary of that exploration:\n\n## Goal\nFaster thumbnails with libvips (govips).\n\n## Constraints & Preferences\n(none)\n\n## Progress\n### Done\n- [x] thumbnail/vips.go: ResizeVips with govips, 6x faster than image/draw\n\n### In Progress\n(none)\n\n### Blocked\n- Needs libvips 8.15 in the runtime image\n\n## Key Decisions\n- **Not adopted yet**: the cgo dependency needs a new base image.\n\n## Next Steps\n1. Try a pure-Go option first\n\n<modified-files>\nthumbnail/vips.go\n</modified-files>", "vips-end", nil, []string{"thumbnail/vips.go"})
			s.User("Try a pure-Go option instead: golang.org/x/image/draw with ApproxBiLinear, no cgo.")
			s.Do("Switching the scaler in resize.go.", Edit("thumbnail/resize.go", "\tdraw.CatmullRom.Scale(dst, dst.Bounds(), src, src.Bounds(), draw.Over, nil)", "\tdraw.ApproxBiLinear.Scale(dst, dst.Bounds(), src, src.Bounds(), draw.Over, nil)"),
				Sh("go test -bench=Resize -run=^$ ./thumbnail/", "BenchmarkResize/catmullrom-8   \t      40\t  29811044 ns/op\nBenchmarkResize/approxbilinear-8 \t     210\t   5602311 ns/op"))
			s.Say("ApproxBiLinear brings a 4000px resize from 29.8ms to 5.6ms (5.3x faster), with no cgo. The quality is visibly softer on text-heavy images; CatmullRom stays better for those.")
			s.User("Hmm, not sure yet. Let me go back and think.")
		}, Expect{
			Goal:          []string{"thumbnail"},
			Constraints:   []string{"no cgo | pure-go | pure go"},
			Done:          []string{"vips.go | govips", "approxbilinear | 5.6ms | 5.3x"},
			Blocked:       []string{"libvips 8.15"},
			Next:          []string{"decide | quality | approxbilinear | catmullrom | choose"},
			Entities:      []string{"thumbnail/vips.go", "thumbnail/resize.go", "ApproxBiLinear", "libvips 8.15"},
			ModifiedFiles: []string{"thumbnail/resize.go", "thumbnail/vips.go"},
		}),
		branchTo("fork", "branch-user-shell", "a branch where the user ran commands themselves (! commands with output)", func(s *Script) {
			s.User("Let's look at the release build of cmd/app.")
			s.Say("Sure, what about it?")
			s.Mark("fork")
			s.User("I want to find out why our Go binary grew from 18MB to 41MB between v2.3 and v2.4.")
			s.Say("We can compare the symbol sizes of the two builds.")
			s.Shell("go build -o /tmp/app-2.4 ./cmd/app && git stash && git checkout v2.3 && go build -o /tmp/app-2.3 ./cmd/app && git checkout - && git stash pop", "", 0)
			s.Shell("go tool nm -size -sort size /tmp/app-2.4 | head -5", "  1e4a0c0   9437184 R github.com/acme/app/internal/geo.cities\n  1a2b3c0   4194304 R github.com/acme/app/internal/geo.countries\n   8f12a0    612330 T runtime.findRunnable\n   4c8b10    401122 T github.com/aws/aws-sdk-go-v2/service/s3.(*Client).PutObject\n   91ab30    350004 T net/http.(*conn).serve", 0)
			s.User("The two biggest are the geo tables. What changed there?")
			s.Do("", Sh("git log --oneline v2.3..v2.4 -- internal/geo/", "c0ffee1 geo: embed the full GeoNames cities table"))
			s.Say("c0ffee1 embeds the full GeoNames cities table in `internal/geo` (`geo.cities`, 9.4MB, and `geo.countries`, 4.2MB, as Go data). Together with the v2 AWS SDK that v2.4 added (`s3.(*Client).PutObject` and friends), that explains most of the 23MB. Loading the tables from a compressed file at start-up would cut roughly 13MB.")
			s.User("ok, good to know. back to the main thread")
		}, Expect{
			Goal:     []string{"18mb & 41mb | binary grew"},
			Done:     []string{"c0ffee1 | geonames"},
			Next:     []string{"compressed | load the tables | 13mb"},
			Entities: []string{"c0ffee1", "geo.cities", "go tool nm -size -sort size /tmp/app-2.4", "internal/geo"},
		}),
		branchTo("fork", "branch-left-mid-task", "a branch left while an interface change was half done", func(s *Script) {
			s.User("Introduce a Clock interface in internal/clock so handlers stop calling time.Now directly. Make it so tests can inject a fake.")
			s.Say("I'll add the interface and then switch callers package by package.")
			s.Mark("fork")
			s.User("Start with the interface and the api package.")
			s.Do("Adding internal/clock.", Write("internal/clock/clock.go", "package clock\n\n// Clock tells the time.\ntype Clock interface{ Now() time.Time }\n\n// Real is the system clock.\ntype Real struct{}\n\nfunc (Real) Now() time.Time { return time.Now() }\n\n// Fake is a settable clock for tests.\ntype Fake struct{ T time.Time }\n\nfunc (f *Fake) Now() time.Time { return f.T }\n"))
			s.Do("Finding time.Now calls in api/.", Sh("rg -l 'time\\.Now\\(\\)' api/", "api/orders.go\napi/invoices.go\napi/sessions.go\napi/webhooks.go"))
			s.Do("Four files. Updating api/orders.go and api/invoices.go first.", Edit("api/orders.go", "CreatedAt: time.Now()", "CreatedAt: h.clock.Now()"), Edit("api/invoices.go", "IssuedAt: time.Now()", "IssuedAt: h.clock.Now()"))
			s.Do("Next I'll update api/sessions.go and api/webhooks.go, then add the clock field to Handler and pass clock.Real{} in cmd/api/main.go.", Edit("api/sessions.go", "expires := time.Now().Add(ttl)", "expires := h.clock.Now().Add(ttl)"))
			s.User("Wait, I need to check something on main first.")
		}, Expect{
			Goal:          []string{"clock & interface"},
			Done:          []string{"internal/clock/clock.go | clock interface | clock.go", "api/orders.go | orders.go"},
			InProgress:    []string{"api/webhooks.go | webhooks | handler | remaining"},
			Next:          []string{"api/webhooks.go | webhooks.go", "cmd/api/main.go | clock.real"},
			Entities:      []string{"internal/clock/clock.go", "api/webhooks.go", "cmd/api/main.go", "clock.Real{}"},
			ModifiedFiles: []string{"api/invoices.go", "api/orders.go", "api/sessions.go", "internal/clock/clock.go"},
		}),
	}
}
