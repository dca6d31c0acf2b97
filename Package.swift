// swift-tools-version:6.1
import PackageDescription
import Foundation

// The commit the binary is built from, for `--version` (AvatarCacheVersion): the build
// scripts export it (scripts/build-env); SwiftPM re-reads this manifest when the
// environment changes, so a new commit recompiles the one C file that holds it.
let buildCommit = (ProcessInfo.processInfo.environment["AVATAR_CACHE_COMMIT"] ?? "")
    .filter { $0.isASCII && ($0.isLetter || $0.isNumber || $0 == ".") }

// AVATAR_CACHE_FAST_PATHS=off builds the shim without its fast paths (each then hands
// the work to the plain libvips path): scripts/test runs the image tests once so.
let fastPaths = ProcessInfo.processInfo.environment["AVATAR_CACHE_FAST_PATHS"] != "off"

/// Another package's product, for the engine's targets: built only with the trait
/// "Engine", so that an app linking only AvatarCacheLookup resolves no other package.
func engineProduct(_ name: String, from package: String) -> Target.Dependency {
    .product(name: name, package: package, condition: .when(traits: ["Engine"]))
}

let package = Package(
    name: "avatar-cache",
    products: [
        // What users run: answers `lookup` itself and hands every other command to the
        // engine (Sources/avatar-cache/Front.swift).
        .executable(name: "avatar-cache", targets: ["avatar-cache"]),
        .executable(name: "avatar-cache-engine", targets: ["avatar-cache-engine"]),
        .library(name: "AvatarCache", targets: ["AvatarCache"]),
        // What the apps and servers link: the lookup, reading the index through the
        // system's SQLite; no other package (docs/embedding.md).
        .library(name: "AvatarCacheLookup", targets: ["AvatarCacheLookup"]),
    ],
    // Everything but the lookup library needs the trait "Engine" (on by default): an app
    // that links only AvatarCacheLookup turns it off (`traits: []`, docs/embedding.md)
    // and resolves, fetches and builds no other package.
    traits: [
        .trait(name: "Engine", description: "The avatar-cache commands, the pipeline and the index writers, with the packages they need (on by default)."),
        .default(enabledTraits: ["Engine"]),
    ],
    dependencies: [
        .package(url: "https://github.com/apple/swift-argument-parser", from: "1.8.2"),
        .package(url: "https://github.com/swift-server/async-http-client", from: "1.37.0"),
        .package(url: "https://github.com/apple/swift-crypto", "3.12.3"..<"5.0.0"),
        .package(url: "https://github.com/apple/swift-log", from: "1.16.2"),
        .package(url: "https://github.com/apple/swift-nio", from: "2.101.2"),
        .package(url: "https://github.com/apple/swift-nio-ssl", from: "2.37.6"),
        // HTTP/2 is async-http-client's own; named here for its error types (a stream the
        // server refused or a connection it closed with GOAWAY: the request is sent again).
        .package(url: "https://github.com/apple/swift-nio-http2.git", from: "1.46.0"),
        .package(url: "https://github.com/jpsim/Yams", from: "6.2.2"),
        .package(url: "https://github.com/groue/GRDB.swift", from: "7.10.0"),
    ],
    targets: [
        // libvips from the system (Debian: libvips-dev): its headers are in the compiler's
        // own search path and the module map links libvips; pkg-config gives the rest, the
        // include directories and libraries of GLib and GObject, which vips.h includes and
        // the shim calls. It names gobject-2.0, not vips: vips.pc pulls in -pthread (through
        // gio-2.0 and its private requirements), a flag SwiftPM refuses with a warning
        // ("prohibited flag(s): -pthread"), and SwiftPM reads this pkg-config file in every
        // build that loads the package, an app's that links only AvatarCacheLookup
        // included (it evaluates every system library a target depends on, built or not).
        // gobject-2.0's flags are the ones vips.h needs, without -pthread.
        .systemLibrary(
            name: "CVips",
            pkgConfig: "gobject-2.0",
            providers: [.apt(["libvips-dev"])]
        ),
        // The C the imaging module calls, one public header per concern (include/CVipsShim.h
        // lists them): libvips' variadic calls with fixed options, which Swift cannot make,
        // and the codecs and pixel loops written against libjpeg-turbo, libheif, lcms2 and zlib.
        .target(
            name: "CVipsShim",
            dependencies: ["CVips"],
            // The counters the tests read (TestCounters.h) only in debug builds, which the
            // tests run; the release build, what ships, has none.
            cSettings: [.define("CVIPSSHIM_TEST_COUNTERS", .when(configuration: .debug))]
                + (fastPaths ? [] : [.define("CVIPSSHIM_NO_FAST_PATHS")]),
            linkerSettings: [.linkedLibrary("jpeg"), .linkedLibrary("lcms2"), .linkedLibrary("heif"), .linkedLibrary("de265"), .linkedLibrary("z")]
        ),
        // The commit this binary was built from (one define, one C file).
        .target(
            name: "CBuildStamp",
            cSettings: [.define("AVATAR_CACHE_COMMIT", to: "\"\(buildCommit)\"")]
        ),
        // The bottom layers, one module each: the model (with what an entry shows and its
        // placeholder), the vocabulary every layer shares, monograms (initials, colours, the
        // spec); then the lookup, what the apps link: a leaf that no layer builds on (it
        // re-exports only the model's three types an answer holds); then the index the
        // writers share.
        .target(name: "AvatarCacheModel"),
        .target(
            name: "AvatarCacheSupport",
            dependencies: ["AvatarCacheModel", "CBuildStamp"]
        ),
        .target(
            name: "AvatarCacheMonograms",
            dependencies: ["AvatarCacheModel"]
        ),
        // The system's SQLite (Debian: libsqlite3-dev), which the lookup reads directly.
        .systemLibrary(
            name: "CSQLite",
            providers: [.apt(["libsqlite3-dev"])]
        ),
        // What the apps link: the reader of the index, with no package of anyone else's
        // (docs/embedding.md, "Building").
        .target(
            name: "AvatarCacheLookup",
            dependencies: ["AvatarCacheModel", "AvatarCacheMonograms", "AvatarCacheSupport", "CSQLite"]
        ),
        // The one JSON tokenizer (JSONReader) and the export's record splitter on it, for the
        // export readers, metadata.json's walk (verify) and anything else reading JSON by
        // hand; nothing of the project below it, no package (scripts/check-targets).
        .target(
            name: "AvatarCacheJSON"
        ),
        // The layers above the index, one module each, bottom first; each depends only on
        // the layers below it (docs/architecture.md, "Code layout"), so the compiler
        // refuses an upward reference. The stages (Exports, Fetching, Imaging, Store)
        // sit side by side: none depends on another.
        .target(
            name: "AvatarCacheExports",
            dependencies: ["AvatarCacheJSON", "AvatarCacheModel", "AvatarCacheMonograms", "AvatarCacheSupport"]
        ),
        .target(
            name: "AvatarCacheFetching",
            dependencies: [
                "AvatarCacheModel", "AvatarCacheSupport",
                engineProduct("AsyncHTTPClient", from: "async-http-client"),
                engineProduct("Crypto", from: "swift-crypto"),
                engineProduct("Logging", from: "swift-log"),
                engineProduct("NIOCore", from: "swift-nio"),
                engineProduct("NIOHTTP1", from: "swift-nio"),
                engineProduct("NIOSSL", from: "swift-nio-ssl"),
                engineProduct("NIOHTTP2", from: "swift-nio-http2"),
            ]
        ),
        .target(
            name: "AvatarCacheImaging",
            dependencies: ["AvatarCacheModel", "AvatarCacheMonograms", "AvatarCacheSupport", "CVips", "CVipsShim"]
        ),
        // The store: the one module that writes a cache (the index through GRDB, the files,
        // metadata.json, the lock), behind intents for every command (CacheStore); no GRDB
        // type crosses its line.
        .target(
            name: "AvatarCacheStore",
            dependencies: [
                "AvatarCacheJSON", "AvatarCacheModel", "AvatarCacheMonograms", "AvatarCacheSupport",
                engineProduct("Crypto", from: "swift-crypto"),
                engineProduct("GRDB", from: "GRDB.swift"),
                engineProduct("GRDBSQLite", from: "GRDB.swift"),
                engineProduct("Logging", from: "swift-log"),
            ]
        ),
        .target(
            name: "AvatarCacheConfiguration",
            dependencies: [
                "AvatarCacheExports", "AvatarCacheFetching", "AvatarCacheModel", "AvatarCacheStore", "AvatarCacheSupport",
                engineProduct("Logging", from: "swift-log"),
                engineProduct("Yams", from: "Yams"),
            ]
        ),
        .target(
            name: "AvatarCachePipeline",
            dependencies: [
                "AvatarCacheConfiguration", "AvatarCacheExports", "AvatarCacheFetching", "AvatarCacheImaging",
                "AvatarCacheModel", "AvatarCacheMonograms", "AvatarCacheStore", "AvatarCacheSupport",
                engineProduct("Logging", from: "swift-log"),
            ]
        ),
        .target(
            name: "AvatarCacheReporting",
            dependencies: ["AvatarCacheFetching", "AvatarCacheModel", "AvatarCachePipeline", "AvatarCacheStore", "AvatarCacheSupport"]
        ),
        // The library: every layer above, re-exported (Exported.swift).
        .target(
            name: "AvatarCache",
            dependencies: [
                "AvatarCacheConfiguration", "AvatarCacheExports", "AvatarCacheFetching", "AvatarCacheImaging",
                "AvatarCacheModel", "AvatarCacheMonograms", "AvatarCachePipeline", "AvatarCacheReporting",
                "AvatarCacheStore", "AvatarCacheSupport",
            ]
        ),
        // `avatar-cache lookup`, and the flags every command that opens a cache takes
        // (`--cache`, `--log-level`, declared once: CacheFlags.swift), shared by the front
        // and the engine.
        .target(
            name: "AvatarCacheLookupCommand",
            dependencies: [
                "AvatarCacheLookup", "AvatarCacheModel",
                engineProduct("ArgumentParser", from: "swift-argument-parser"),
            ]
        ),
        .executableTarget(
            name: "avatar-cache",
            dependencies: [
                "AvatarCacheLookup",
                "AvatarCacheLookupCommand",
                "AvatarCacheModel",
                "AvatarCacheSupport",
                engineProduct("ArgumentParser", from: "swift-argument-parser"),
            ]
        ),
        .executableTarget(
            name: "avatar-cache-engine",
            dependencies: [
                "AvatarCache",
                "AvatarCacheLookupCommand",
                engineProduct("ArgumentParser", from: "swift-argument-parser"),
                engineProduct("Logging", from: "swift-log"),
            ]
        ),
        // docs/embedding.md's example: a server route's handler over AvatarCacheLookup alone.
        .executableTarget(
            name: "lookup-route",
            dependencies: ["AvatarCacheLookup"],
            path: "Examples/lookup-route"
        ),
        // The lookup timed as an app uses it (scripts/bench-lookup), against AvatarCacheLookup alone.
        .executableTarget(
            name: "lookup-bench",
            dependencies: ["AvatarCacheLookup"],
            path: "Examples/lookup-bench"
        ),
        // Test support: zlib's inflate, to check a PNG's stream whole (libpng only warns
        // about a bad checksum at its end).
        .target(
            name: "CTestZlib",
            path: "Tests/CTestZlib",
            linkerSettings: [.linkedLibrary("z")]
        ),
        .target(
            name: "CVipsShimTesting",
            path: "Tests/CVipsShimTesting"
        ),
        // What the tests of every layer share (files, scratch directories, the HTTP and TLS
        // servers they start, the binaries they run); then what the end-to-end tests and the
        // image tests share above it.
        .target(
            name: "AvatarCacheTestKit",
            dependencies: [
                "AvatarCacheExports",
                "AvatarCacheModel",
                "CSQLite",
                engineProduct("Logging", from: "swift-log"),
                engineProduct("NIOConcurrencyHelpers", from: "swift-nio"),
                engineProduct("NIOCore", from: "swift-nio"),
                engineProduct("NIOHTTP1", from: "swift-nio"),
                engineProduct("NIOHTTP2", from: "swift-nio-http2"),
                engineProduct("NIOPosix", from: "swift-nio"),
                engineProduct("NIOSSL", from: "swift-nio-ssl"),
            ],
            path: "Tests/AvatarCacheTestKit"
        ),
        .target(
            name: "AvatarCacheTestSupport",
            dependencies: [
                "AvatarCacheConfiguration",
                "AvatarCacheFetching",
                "AvatarCacheStore",
                "AvatarCacheSupport",
                "AvatarCacheTestKit",
            ],
            path: "Tests/AvatarCacheTestSupport"
        ),
        .target(
            name: "AvatarCacheImagingTestSupport",
            dependencies: [
                "AvatarCacheImaging",
                "AvatarCacheSupport",
                "CVips",
                "CVipsShim",
            ],
            path: "Tests/AvatarCacheImagingTestSupport"
        ),
        // A test target per library module, `<Module>Tests`, importing that module and
        // those below it (and the test kits); scripts/check-targets fails when a module has
        // none. Then the end-to-end tests, which run the binaries (built first: they depend
        // on them) or test a layer through a whole warm.
        .testTarget(
            name: "AvatarCacheModelTests",
            dependencies: [
                "AvatarCacheModel",
                engineProduct("Crypto", from: "swift-crypto"),
            ],
            path: "Tests/AvatarCacheModelTests"
        ),
        .testTarget(
            name: "AvatarCacheSupportTests",
            dependencies: [
                "AvatarCacheModel",
                "AvatarCacheSupport",
                engineProduct("Crypto", from: "swift-crypto"),
            ],
            path: "Tests/AvatarCacheSupportTests"
        ),
        .testTarget(
            name: "AvatarCacheJSONTests",
            dependencies: ["AvatarCacheJSON"],
            path: "Tests/AvatarCacheJSONTests"
        ),
        .testTarget(
            name: "AvatarCacheMonogramsTests",
            dependencies: [
                "AvatarCacheModel",
                "AvatarCacheMonograms",
            ],
            path: "Tests/AvatarCacheMonogramsTests"
        ),
        .testTarget(
            name: "AvatarCacheLookupTests",
            dependencies: [
                "AvatarCacheLookup",
                "AvatarCacheModel",
                "AvatarCacheMonograms",
                "AvatarCacheTestKit",
            ],
            path: "Tests/AvatarCacheLookupTests"
        ),
        .testTarget(
            name: "AvatarCacheExportsTests",
            dependencies: [
                "AvatarCacheExports",
                "AvatarCacheFetching",
                "AvatarCacheImaging",
                "AvatarCacheModel",
                "AvatarCacheMonograms",
                "AvatarCacheSupport",
                "AvatarCacheTestKit",
                engineProduct("Crypto", from: "swift-crypto"),
            ],
            path: "Tests/AvatarCacheExportsTests"
        ),
        .testTarget(
            name: "AvatarCacheFetchingTests",
            dependencies: [
                "AvatarCacheFetching",
                "AvatarCacheModel",
                "AvatarCacheSupport",
                "AvatarCacheTestKit",
                engineProduct("AsyncHTTPClient", from: "async-http-client"),
                engineProduct("NIOConcurrencyHelpers", from: "swift-nio"),
                engineProduct("NIOCore", from: "swift-nio"),
                engineProduct("NIOHTTP2", from: "swift-nio-http2"),
            ],
            path: "Tests/AvatarCacheFetchingTests"
        ),
        .testTarget(
            name: "AvatarCacheImagingTests",
            dependencies: [
                "AvatarCacheExports",
                "AvatarCacheImaging",
                "AvatarCacheImagingTestSupport",
                "AvatarCacheLookup",
                "AvatarCacheModel",
                "AvatarCacheMonograms",
                "AvatarCacheSupport",
                "AvatarCacheTestKit",
                "CTestZlib",
                "CVips",
                "CVipsShim",
                "CVipsShimTesting",
            ],
            path: "Tests/AvatarCacheImagingTests"
        ),
        .testTarget(
            name: "AvatarCacheStoreTests",
            dependencies: [
                "AvatarCacheLookup",
                "AvatarCacheModel",
                "AvatarCacheMonograms",
                "AvatarCacheStore",
                "AvatarCacheSupport",
                "AvatarCacheTestKit",
                engineProduct("GRDB", from: "GRDB.swift"),
            ],
            path: "Tests/AvatarCacheStoreTests"
        ),
        .testTarget(
            name: "AvatarCacheConfigurationTests",
            dependencies: [
                "AvatarCacheConfiguration",
                "AvatarCacheExports",
                "AvatarCacheSupport",
                "AvatarCacheTestKit",
                engineProduct("Yams", from: "Yams"),
            ],
            path: "Tests/AvatarCacheConfigurationTests"
        ),
        .testTarget(
            name: "AvatarCachePipelineTests",
            dependencies: [
                "AvatarCacheConfiguration",
                "AvatarCacheExports",
                "AvatarCacheFetching",
                "AvatarCacheImagingTestSupport",
                "AvatarCachePipeline",
                "AvatarCacheStore",
                "AvatarCacheTestKit",
                "AvatarCacheTestSupport",
                engineProduct("Crypto", from: "swift-crypto"),
                engineProduct("NIOConcurrencyHelpers", from: "swift-nio"),
            ],
            path: "Tests/AvatarCachePipelineTests"
        ),
        .testTarget(
            name: "AvatarCacheReportingTests",
            dependencies: [
                "AvatarCacheConfiguration",
                "AvatarCacheFetching",
                "AvatarCacheModel",
                "AvatarCachePipeline",
                "AvatarCacheReporting",
                "AvatarCacheStore",
                "AvatarCacheSupport",
                "AvatarCacheTestKit",
                "AvatarCacheTestSupport",
            ],
            path: "Tests/AvatarCacheReportingTests"
        ),
        .testTarget(
            name: "AvatarCacheTests",
            dependencies: [
                "AvatarCache",
                "AvatarCacheTestKit",
            ],
            path: "Tests/AvatarCacheTests"
        ),
        .testTarget(
            name: "AvatarCacheLookupCommandTests",
            dependencies: [
                "AvatarCacheLookup",
                "AvatarCacheLookupCommand",
                "AvatarCacheTestKit",
                engineProduct("ArgumentParser", from: "swift-argument-parser"),
            ],
            path: "Tests/AvatarCacheLookupCommandTests"
        ),
        // The engine's command line as a library: the table of settings against the
        // commands that declare its flags, without running the binary.
        .testTarget(
            name: "AvatarCacheEngineTests",
            dependencies: [
                "AvatarCacheConfiguration",
                "AvatarCacheExports",
                "AvatarCacheLookupCommand",
                "AvatarCacheModel",
                "AvatarCacheStore",
                "AvatarCacheTestKit",
                "avatar-cache-engine",
                engineProduct("ArgumentParser", from: "swift-argument-parser"),
            ],
            path: "Tests/AvatarCacheEngineTests"
        ),
        .testTarget(
            name: "AvatarCacheEndToEndTests",
            dependencies: [
                "AvatarCacheConfiguration",
                "AvatarCacheExports",
                "AvatarCacheFetching",
                "AvatarCacheImaging",
                "AvatarCacheImagingTestSupport",
                "AvatarCacheLookup",
                "AvatarCacheLookupCommand",
                "AvatarCacheModel",
                "AvatarCacheMonograms",
                "AvatarCachePipeline",
                "AvatarCacheStore",
                "AvatarCacheSupport",
                "AvatarCacheTestKit",
                "AvatarCacheTestSupport",
                "avatar-cache",
                "avatar-cache-engine",
                "lookup-route",
                engineProduct("AsyncHTTPClient", from: "async-http-client"),
                engineProduct("GRDB", from: "GRDB.swift"),
                engineProduct("NIOCore", from: "swift-nio"),
                engineProduct("NIOHTTP1", from: "swift-nio"),
                engineProduct("Yams", from: "Yams"),
            ],
            path: "Tests/AvatarCacheEndToEndTests"
        ),
    ]
)
