// swift-tools-version:6.1
import PackageDescription

let package = Package(
    name: "StationAdmin",
    products: [
        .executable(name: "station-admin", targets: ["Admin"]),
        .library(name: "Model", targets: ["Model"]),
    ],
    dependencies: [
        .package(url: "https://github.com/groue/GRDB.swift", from: "7.10.0"),
        .package(url: "https://github.com/apple/swift-argument-parser", from: "1.8.2"),
        .package(url: "https://github.com/apple/swift-crypto", from: "3.12.3"),
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
        .executableTarget(
            name: "Admin",
            dependencies: [
                "Model",
                .product(name: "ArgumentParser", package: "swift-argument-parser"),
            ]
        ),
        .testTarget(
            name: "ModelTests",
            dependencies: ["Model", "Admin"],
            exclude: ["Fixtures", "Support/expected_counts.py"]
        ),
    ],
    swiftLanguageModes: [.v6]
)
