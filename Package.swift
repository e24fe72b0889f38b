// swift-tools-version:6.1
import PackageDescription

let grdb: Target.Dependency = .product(name: "GRDB", package: "GRDB.swift")
let grdbSQLite: Target.Dependency = .product(name: "GRDBSQLite", package: "GRDB.swift")
let crypto: Target.Dependency = .product(name: "Crypto", package: "swift-crypto")
/// Every target of the library, for the product and the tests.
let modelTargets = ["StationSupport", "StationSchema", "StationCSV", "StationHistory", "StationLog", "StationCheck",
                    "StationVersion", "StationImport", "StationCurate", "StationWeights", "StationDelta",
                    "StationManifest", "StationReleaseFolder", "StationRelease", "StationReview", "StationSynth"]

/// The curator's tools (`station-admin`, `serve`) and the example app, on by default. An app that
/// depends on this package for `StationClient` turns it off (`traits: []`) and resolves only
/// GRDB and swift-crypto with their own dependencies (scripts/client-consumer checks it).
let curatorTools = "CuratorTools"
func withCuratorTools(_ product: String, _ package: String) -> Target.Dependency {
    .product(name: product, package: package, condition: .when(traits: [curatorTools]))
}

var dependencies: [Package.Dependency] = [
    .package(url: "https://github.com/groue/GRDB.swift", from: "7.10.0"),
    .package(url: "https://github.com/apple/swift-crypto", from: "3.12.3"),
    .package(url: "https://github.com/apple/swift-argument-parser", from: "1.8.2"),
    .package(url: "https://github.com/hummingbird-project/hummingbird", from: "2.28.1"),
    .package(url: "https://github.com/swift-server/swift-service-lifecycle", from: "2.13.0"),
    .package(url: "https://github.com/apple/swift-nio", from: "2.101.2"),
    .package(url: "https://github.com/apple/swift-nio-ssl", from: "2.37.6"),
    .package(url: "https://github.com/apple/swift-log", from: "1.16.2"),
    .package(url: "https://github.com/vapor/postgres-nio", from: "1.33.2"),
]
// `swift package generate-documentation` (scripts/documentation sets it): a consumer of the
// library never resolves the plugin.
if Context.environment["STATION_ADMIN_DOCUMENTATION"] == "1" {
    dependencies.append(.package(url: "https://github.com/swiftlang/swift-docc-plugin", from: "1.5.0"))
}

let package = Package(
    name: "StationAdmin",
    // GRDB's own floor is iOS 13 and macOS 10.15; the client's concurrency and Foundation calls
    // need iOS 15 and macOS 12, and Hummingbird (the curator's `serve`) macOS 14.
    platforms: [.iOS(.v15), .macOS(.v14), .tvOS(.v15), .watchOS(.v8)],
    products: [
        .executable(name: "station-admin", targets: ["Admin"]),
        .library(name: "Model", targets: modelTargets),
        .library(name: "StationServe", targets: ["StationServe"]),
        .library(name: "StationConformance", targets: ["StationConformance"]),
        // What a phone app embeds: no target of the curator's toolkit.
        .library(name: "StationClient", targets: ["StationClient", "StationClientCore", "StationManifest", "StationSignatures", "StationSQLite", "StationFiles"]),
        // The example app on it, which the tests, scripts/demo and README use.
        .executable(name: "station-phone", targets: ["StationPhone"]),
    ],
    traits: [
        .trait(name: curatorTools, description: "station-admin, serve and station-phone, with their dependencies"),
        .default(enabledTraits: [curatorTools]),
    ],
    dependencies: dependencies,
    targets: [
        .systemLibrary(name: "CCSV", path: "Sources/CCSV", providers: [.apt(["libcsv-dev"])]),
        .systemLibrary(name: "CZlib", path: "Sources/CZlib", providers: [.apt(["zlib1g-dev"])]),
        .systemLibrary(name: "CSQLiteConfig", path: "Sources/CSQLiteConfig", providers: [.apt(["libsqlite3-dev"])]),
        // The C library's stdout, for the tool's check that its output was written.
        .systemLibrary(name: "CStandardStreams", path: "Sources/CStandardStreams"),
        // glibc's malloc_trim, for `serve` to give back the memory a burst of connections took.
        .systemLibrary(name: "CAllocator", path: "Sources/CAllocator"),
        // libcurl's easy interface for the client's HTTP on Linux, whose callbacks can stop a transfer
        // at once (URLSession there queues what arrives without limit); Apple's systems use URLSession.
        // It loads libcurl when a transfer first needs it (dlopen), so that a tool which may never
        // fetch over HTTP does not load it and the thirty libraries it needs at every start.
        .target(name: "CCurlTransfer", path: "Sources/CCurlTransfer", linkerSettings: [.linkedLibrary("dl")]),
        // Files and folders only this user can have made: no final link followed, no other user's file trusted.
        .target(name: "StationFiles", path: "Sources/StationFiles"),
        // SQLite connections that run nothing a file brings: the tools' and the phone's alike.
        .target(name: "StationSQLite", dependencies: ["CSQLiteConfig", grdb, grdbSQLite], path: "Sources/StationSQLite"),
        // Signed manifests as both sides read them: the curator's release signs, the phone checks.
        .target(name: "StationSignatures", dependencies: [crypto], path: "Sources/StationSignatures"),
        // The phone's side: one call that updates an app's database by any of the three paths.
        .target(name: "StationClientCore", dependencies: ["StationManifest", "StationSignatures", "StationSQLite", "StationFiles", "CZlib", grdb, grdbSQLite, crypto,
                                                         .target(name: "CCurlTransfer", condition: .when(platforms: [.linux]))],
                path: "Sources/StationClientCore"),
        // What an app imports: the core, and the HTTP source made from a URLSessionConfiguration,
        // which on Linux needs FoundationNetworking (and libcurl loaded at every start).
        .target(name: "StationClient", dependencies: ["StationClientCore", "StationManifest", "StationSignatures", grdb], path: "Sources/StationClient"),
        // The library, one target per capability, along the data flow (docs/ARCHITECTURE.md, which
        // scripts/architecture draws from this list): a target sees only what it depends on, so
        // a reference against the flow does not compile.
        .target(name: "StationSupport", dependencies: ["CZlib", crypto], path: "Sources/Model/Support"),
        .target(name: "StationSchema", dependencies: ["StationManifest", "StationSupport", "StationSQLite", "CSQLiteConfig", grdb, grdbSQLite], path: "Sources/Model/Schema"),
        .target(name: "StationCSV", dependencies: ["StationSchema", "StationSQLite", "CCSV", grdb, grdbSQLite], path: "Sources/Model/CSV"),
        .target(name: "StationHistory", dependencies: ["StationSchema", grdb], path: "Sources/Model/History"),
        .target(name: "StationLog", dependencies: ["StationSchema", grdb], path: "Sources/Model/Log"),
        .target(name: "StationCheck", dependencies: ["StationHistory", "StationSQLite", grdb, grdbSQLite], path: "Sources/Model/Check"),
        .target(name: "StationVersion", dependencies: ["StationCSV", "StationCheck", grdb, grdbSQLite], path: "Sources/Model/Version"),
        .target(name: "StationImport", dependencies: ["StationVersion", "StationCheck", grdb, grdbSQLite], path: "Sources/Model/Import"),
        .target(name: "StationCurate", dependencies: ["StationVersion", "StationSQLite", grdb], path: "Sources/Model/Curate"),
        .target(name: "StationWeights", dependencies: ["StationCurate", grdb], path: "Sources/Model/Weights"),
        .target(name: "StationDelta", dependencies: ["StationHistory", "StationManifest", "StationSQLite", grdb], path: "Sources/Model/Delta"),
        // The manifest's format alone, phone-safe: the client compiles it into every app.
        .target(name: "StationManifest", dependencies: ["StationSignatures"], path: "Sources/Model/Manifest"),
        // A release folder on disk held to its manifest, and the answer it gives a phone: the curator's release and `serve`.
        .target(name: "StationReleaseFolder", dependencies: ["StationManifest", "StationSupport", "StationSignatures"], path: "Sources/Model/ReleaseFolder"),
        .target(name: "StationRelease", dependencies: ["StationManifest", "StationReleaseFolder", "StationDelta", "StationLog", "StationCheck", "StationSignatures", "StationSQLite", "StationFiles", grdb, grdbSQLite, crypto], path: "Sources/Model/Release"),
        .target(name: "StationReview", dependencies: ["StationDelta", "StationLog", "StationWeights", grdb], path: "Sources/Model/Review"),
        .target(name: "StationSynth", dependencies: ["StationCSV", "CCSV"], path: "Sources/Model/Synth"),
        // Serving release folders over HTTP: apart from Model, so that nothing in the write and
        // release paths depends on a server framework.
        .target(
            name: "StationServe",
            dependencies: [
                "StationManifest", "StationReleaseFolder", "StationSignatures", "StationSupport", "CAllocator", crypto,
                withCuratorTools("Hummingbird", "hummingbird"),
                withCuratorTools("ServiceLifecycle", "swift-service-lifecycle"),
                withCuratorTools("NIOHTTP1", "swift-nio"),
                withCuratorTools("NIOPosix", "swift-nio"),
            ]
        ),
        // The release protocol's scenarios run against any client's updater (`conformance`):
        // apart from Model, as `serve` is, for its misbehaving server on Hummingbird.
        .target(
            name: "StationConformance",
            dependencies: [
                "StationRelease", "StationCurate", "StationImport", "StationSynth", "StationSchema", "StationManifest",
                "StationSignatures", "StationSupport", "StationSQLite", crypto, grdb, grdbSQLite,
                withCuratorTools("Hummingbird", "hummingbird"),
                withCuratorTools("ServiceLifecycle", "swift-service-lifecycle"),
                withCuratorTools("NIOCore", "swift-nio"),
                withCuratorTools("Logging", "swift-log"),
            ]
        ),
        // The web service's database as a second client of a release: apart from Model, so that
        // only `sync-postgres` depends on a PostgreSQL client.
        .target(
            name: "StationWeb",
            dependencies: [
                "StationClientCore", "StationSupport", "StationSQLite", grdb, grdbSQLite,
                withCuratorTools("PostgresNIO", "postgres-nio"),
                withCuratorTools("Logging", "swift-log"),
                withCuratorTools("NIOCore", "swift-nio"),
                withCuratorTools("NIOConcurrencyHelpers", "swift-nio"),
                withCuratorTools("NIOPosix", "swift-nio"),
                withCuratorTools("NIOSSL", "swift-nio-ssl"),
            ]
        ),
        .executableTarget(
            name: "Admin",
            dependencies: modelTargets.map { .target(name: $0) } + [
                // On Linux the core alone, with libcurl's transport: no FoundationNetworking.
                "StationServe", "StationWeb", "StationConformance", "StationClientCore", "StationSignatures", "CStandardStreams",
                .target(name: "StationClient", condition: .when(platforms: [.macOS])),
                withCuratorTools("ArgumentParser", "swift-argument-parser"),
            ],
            // Swift's static runtime links every executable with --export-dynamic: the tool's
            // 34,000 symbols in its dynamic table, which the loader and the backtracer's start
            // walk on every run, and nothing looks them up.
            // An ELF linker's flag: Apple's linker knows no such option.
            linkerSettings: [.unsafeFlags(["-Xlinker", "--no-export-dynamic"], .when(platforms: [.linux]))]
        ),
        .executableTarget(
            name: "StationPhone",
            // Foundation's URLSession on Linux is libcurl: a --static-swift-stdlib build links it
            // (-lcurl), which needs libcurl4-openssl-dev (benchmarks/run installs it).
            dependencies: ["StationClient", "StationSignatures", grdb, withCuratorTools("ArgumentParser", "swift-argument-parser")]
        ),
        .testTarget(
            name: "ModelTests",
            dependencies: modelTargets.map { .target(name: $0) } + ["Admin", "StationServe", "StationWeb", "StationConformance", "StationSignatures", "StationClient",
                                                                   "StationClientCore", "StationPhone", "StationSQLite", "StationFiles"],
            exclude: ["Fixtures", "Helpers/expected_counts.py"]
        ),
    ],
    swiftLanguageModes: [.v6]
)
