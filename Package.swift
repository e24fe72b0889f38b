// swift-tools-version:6.1
import PackageDescription

let package = Package(
    name: "StationAdmin",
    products: [
        .executable(name: "station-admin", targets: ["Admin"]),
        .library(name: "Model", targets: ["Model"]),
        .library(name: "StationServe", targets: ["StationServe"]),
    ],
    dependencies: [
        .package(url: "https://github.com/groue/GRDB.swift", from: "7.10.0"),
        .package(url: "https://github.com/apple/swift-argument-parser", from: "1.8.2"),
        .package(url: "https://github.com/apple/swift-crypto", from: "3.12.3"),
        .package(url: "https://github.com/hummingbird-project/hummingbird", from: "2.28.1"),
        .package(url: "https://github.com/swift-server/swift-service-lifecycle", from: "2.13.0"),
        .package(url: "https://github.com/apple/swift-nio", from: "2.101.2"),
    ],
    targets: [
        .systemLibrary(name: "CCSV", path: "Sources/CCSV", providers: [.apt(["libcsv-dev"])]),
        .systemLibrary(name: "CZlib", path: "Sources/CZlib", providers: [.apt(["zlib1g-dev"])]),
        .target(
            name: "Model",
            dependencies: [
                "CCSV", "CZlib",
                .product(name: "GRDB", package: "GRDB.swift"),
                .product(name: "GRDBSQLite", package: "GRDB.swift"),
                .product(name: "Crypto", package: "swift-crypto"),
            ]
        ),
        // Serving release folders over HTTP: apart from Model, so that nothing in the write and
        // release paths depends on a server framework.
        .target(
            name: "StationServe",
            dependencies: [
                "Model",
                .product(name: "Hummingbird", package: "hummingbird"),
                .product(name: "ServiceLifecycle", package: "swift-service-lifecycle"),
                .product(name: "_NIOFileSystem", package: "swift-nio"),
                .product(name: "NIOHTTP1", package: "swift-nio"),
            ]
        ),
        .executableTarget(
            name: "Admin",
            dependencies: [
                "Model",
                "StationServe",
                .product(name: "ArgumentParser", package: "swift-argument-parser"),
            ]
        ),
        .testTarget(
            name: "ModelTests",
            dependencies: ["Model", "Admin", "StationServe"],
            exclude: ["Fixtures", "Support/expected_counts.py"]
        ),
    ],
    swiftLanguageModes: [.v6]
)
