import Foundation
import GRDB
import Testing
@testable import AvatarCacheImaging
import AvatarCacheImagingTestSupport
@testable import AvatarCacheStore
@testable import AvatarCacheLookup
import AvatarCacheLookupCommand
@testable import AvatarCachePipeline
@testable import AvatarCacheSupport
import AvatarCacheTestKit
import AvatarCacheTestSupport

/// Placeholders: every photo of a warm given one whose colour is the tier's, monograms
/// their colour, a cache of the version before taken over, and the lookup library that
/// links no image code (ThumbHash held to its reference implementation:
/// AvatarCacheImagingTests' ThumbHashReferenceTests).
@Suite struct PlaceholderTests {
    /// CIE 1976 ΔE between two sRGB colours (0…255), through XYZ (D65).
    static func deltaE(_ a: (Double, Double, Double), _ b: (Double, Double, Double)) -> Double {
        func lab(_ c: (Double, Double, Double)) -> (Double, Double, Double) {
            func linear(_ v: Double) -> Double { let v = v / 255; return v <= 0.04045 ? v / 12.92 : pow((v + 0.055) / 1.055, 2.4) }
            let r = linear(c.0), g = linear(c.1), bl = linear(c.2)
            let x = (0.4124 * r + 0.3576 * g + 0.1805 * bl) / 0.95047
            let y = 0.2126 * r + 0.7152 * g + 0.0722 * bl
            let z = (0.0193 * r + 0.1192 * g + 0.9505 * bl) / 1.08883
            func f(_ t: Double) -> Double { t > 216.0 / 24389 ? cbrt(t) : (24389.0 / 27 * t + 16) / 116 }
            return (116 * f(y) - 16, 500 * (f(x) - f(y)), 200 * (f(y) - f(z)))
        }
        let p = lab(a), q = lab(b)
        return ((p.0 - q.0) * (p.0 - q.0) + (p.1 - q.1) * (p.1 - q.1) + (p.2 - q.2) * (p.2 - q.2)).squareRoot()
    }

    /// Mean colour of straight RGBA pixels composited on white.
    static func meanOnWhite(_ rgba: [UInt8]) -> (Double, Double, Double) {
        var sum = (0.0, 0.0, 0.0)
        let count = Double(rgba.count / 4)
        for i in stride(from: 0, to: rgba.count, by: 4) {
            let a = Double(rgba[i + 3]) / 255
            sum.0 += Double(rgba[i]) * a + 255 * (1 - a)
            sum.1 += Double(rgba[i + 1]) * a + 255 * (1 - a)
            sum.2 += Double(rgba[i + 2]) * a + 255 * (1 - a)
        }
        return (sum.0 / count, sum.1 / count, sum.2 / count)
    }

    @Test func everyPhotoOfAWarmHasAPlaceholderWhoseColourIsTheTiers() async throws {
        let names = ["chelsea.jpg", "chelsea-96.jpg", "coffee-cmyk.jpg", "coffee-rotated.jpg", "camera.png", "chelsea-disc.png",
                     "chelsea-disc.webp", "motorcycle.webp", "coins.gif", "hubble.jpg", "logo.png"]
        var routes: [String: FixtureServer.Reply] = [:]
        for name in names { routes["/\(name)"] = .ok(bytes: try Fixtures.photo(name)) }
        let server = try FixtureServer(routes: routes)
        defer { server.shutdown() }
        let directory = try Fixtures.temporaryDirectory("placeholders")
        defer { try? FileManager.default.removeItem(at: directory) }
        var users = names.enumerated().map { (id: "u\($0.offset)", name: "User \($0.offset)", url: Optional(server.url("/\($0.element)"))) }
        users.append((id: "nobody", name: "No Photo", url: nil))
        let export = try Fixtures.writeUsersExport(users, in: directory)
        let cache = directory.appendingPathComponent("cache")
        for format in [OutputFormat.jpeg, .png] {
            try? FileManager.default.removeItem(at: cache)
            var configuration = Fixtures.configuration(exports: [export], cache: cache)
            configuration.outputFormat = format
            let report = try await WarmPipeline(configuration: configuration, logger: .test).run()
            #expect(report.failed == 0)

            let document = try MetadataDocument.read(CacheDirectory(root: cache))
            #expect(document.schemaVersion == MetadataDocument.schemaVersion)
            let photos = document.entries.values.filter { $0.kind == .photo }
            #expect(photos.count == names.count)
            for entry in photos {
                let placeholder = try #require(entry.placeholder, "\(entry.filename)")
                let hash = try #require(placeholder.thumbHash.flatMap { Data(base64Encoded: $0) }, "\(entry.filename)")
                #expect((20...30).contains(hash.count), "\(entry.filename): \(hash.count) bytes")
                // The tier's own average (the smallest file, decoded here), against the
                // recorded colour and against what the reference decoder draws.
                let smallest = try #require(entry.files.min { Int($0.key)! < Int($1.key)! }?.value)
                let pixels = try Pixels(decoding: [UInt8](Data(contentsOf: cache.appendingPathComponent(smallest.filename))))
                var rgba: [UInt8] = []
                rgba.reserveCapacity(pixels.width * pixels.height * 4)
                for i in stride(from: 0, to: pixels.data.count, by: pixels.bands) {
                    let p = pixels.data[i..<(i + pixels.bands)].map { $0 }
                    switch pixels.bands {
                    case 1: rgba += [p[0], p[0], p[0], 255]
                    case 2: rgba += [p[0], p[0], p[0], p[1]]
                    case 3: rgba += p + [255]
                    default: rgba += p
                    }
                }
                let tier = Self.meanOnWhite(rgba)
                #expect(Self.deltaE(tier, MonogramRenderer.rgb(placeholder.color)) < 1.5, "\(entry.filename): \(placeholder.color) for \(tier)")
                let decoded = try #require(ThumbHash.decode([UInt8](hash)))
                let drawn = Self.meanOnWhite(decoded.rgba)
                #expect(Self.deltaE(tier, drawn) < 5, "\(entry.filename): the ThumbHash draws \(drawn), the tier is \(tier)")
            }
            // Monograms: their colour, no hash; the lookup answers the same.
            for entry in document.entries.values where entry.kind == .monogram {
                #expect(entry.placeholder?.thumbHash == nil && entry.placeholder?.color.hasPrefix("#") == true)
            }
            let lookup = try CacheLookup(cache: cache)
            let monogram = try await lookup.answer(forUser: "nobody", viewSize: 55, scale: 3)
            #expect(monogram.kind == .monogram && monogram.placeholder == Placeholder(color: monogram.color!))
            let photo = try await lookup.answer(forUser: "u0", viewSize: 55, scale: 3)
            #expect(photo.kind == .photo && photo.placeholder == document.entries[server.url("/chelsea.jpg")]?.placeholder)
        }
    }

    @Test func aCacheOfTheVersionBeforeIsTakenOverAndItsPhotosGetPlaceholdersWhenDecodedAgain() async throws {
        let photo = try Fixtures.photo("chelsea.jpg")
        let server = try FixtureServer(routes: ["/a.jpg": .ok(bytes: photo), "/b.jpg": .ok(bytes: try Fixtures.photo("hubble.jpg"))])
        defer { server.shutdown() }
        let directory = try Fixtures.temporaryDirectory("placeholders-upgrade")
        defer { try? FileManager.default.removeItem(at: directory) }
        let export = try Fixtures.writeUsersExport([(id: "a", name: "A", url: server.url("/a.jpg")), (id: "b", name: "B", url: server.url("/b.jpg"))], in: directory)
        let cache = directory.appendingPathComponent("cache")
        let configuration = Fixtures.configuration(exports: [export], cache: cache)
        _ = try await WarmPipeline(configuration: configuration, logger: .test).run()

        // Made into the version before: no placeholder columns, no v5 migration, a
        // metadata.json of schema 2 without placeholders.
        let indexPath = cache.appendingPathComponent(CacheIndex.fileName).path
        try Self.downgrade(indexPath)
        let metadataURL = cache.appendingPathComponent("metadata.json")
        var json = try JSONSerialization.jsonObject(with: Data(contentsOf: metadataURL)) as! [String: Any]
        json["schemaVersion"] = 2
        var entries = json["entries"] as! [String: [String: Any]]
        for key in entries.keys { entries[key]!["placeholder"] = nil }
        json["entries"] = entries
        try JSONSerialization.data(withJSONObject: json).write(to: metadataURL)

        // Where it cannot be written (as nobody when this is root), the old index answers
        // without placeholders.
        for name in try FileManager.default.contentsOfDirectory(atPath: cache.path) {
            try FileManager.default.setAttributes([.posixPermissions: 0o444], ofItemAtPath: cache.appendingPathComponent(name).path)
        }
        for path in [directory.path, cache.path] { try FileManager.default.setAttributes([.posixPermissions: 0o555], ofItemAtPath: path) }
        let arguments = ["lookup", "--cache", cache.path, "--user", "a", "--json"]
        let readOnly = getuid() == 0
            ? try Binary.run(["--reuid=65534", "--regid=65534", "--clear-groups", Binary.url.path] + arguments,
                               executable: URL(fileURLWithPath: "/usr/bin/setpriv"))
            : try Binary.run(arguments)
        #expect(readOnly.status == 0 && readOnly.stdout.contains("\"kind\" : \"photo\"") && !readOnly.stdout.contains("\"placeholder\""),
                "\(readOnly.stdout) \(readOnly.stderr)")
        for path in [directory.path, cache.path] { try FileManager.default.setAttributes([.posixPermissions: 0o755], ofItemAtPath: path) }
        for name in try FileManager.default.contentsOfDirectory(atPath: cache.path) {
            try FileManager.default.setAttributes([.posixPermissions: 0o644], ofItemAtPath: cache.appendingPathComponent(name).path)
        }

        // A re-run inside the TTL takes the cache over: nothing downloaded again.
        let requestsBefore = server.requests.count
        let report = try await WarmPipeline(configuration: configuration, logger: .test).run()
        #expect(report.downloaded == 0 && server.requests.count == requestsBefore)
        let upgraded = try MetadataDocument.read(CacheDirectory(root: cache))
        #expect(upgraded.schemaVersion == MetadataDocument.schemaVersion)
        #expect(upgraded.entries[server.url("/a.jpg")]?.placeholder == nil)
        let lookup = try CacheLookup(cache: cache)
        #expect(try await lookup.answer(forUser: "a", viewSize: 55, scale: 3).placeholder == nil)

        // The photo changes: decoded again, it has its placeholder.
        // The photo's freshness runs out and it has changed: decoded again, it has its
        // placeholder.
        server.setRoute("/a.jpg", .ok(bytes: try Fixtures.photo("coffee.jpg")))
        try Self.expire(indexPath, key: server.url("/a.jpg"))
        let refetched = try await WarmPipeline(configuration: configuration, logger: .test).run()
        #expect(refetched.downloaded == 1)
        let after = try MetadataDocument.read(CacheDirectory(root: cache))
        #expect(after.entries[server.url("/a.jpg")]?.placeholder?.thumbHash != nil)
    }

    /// The front `avatar-cache` is built from AvatarCacheLookup (and swift-argument-parser)
    /// alone: no image library among the shared objects it needs, and its lookups are the
    /// engine's, byte for byte.
    @Test func theLookupBinaryLinksNoImageLibraryAndAnswersAsTheEngine() async throws {
        let front = Binary.url
        let engine = front.deletingLastPathComponent().appendingPathComponent("avatar-cache-engine")
        let needed = try Self.neededLibraries(front.path)
        #expect(needed.contains { $0.hasPrefix("libsqlite3") }, "\(needed)")
        for library in ["vips", "jpeg", "heif", "png", "webp", "Magick", "glib", "gobject", "nghttp", "ssl", "yaml"] {
            #expect(!needed.contains { $0.contains(library) }, "\(library) in \(needed)")
        }
        #expect(try Self.neededLibraries(engine.path).contains { $0.hasPrefix("libvips") })

        let server = try FixtureServer(routes: ["/p.jpg": .ok(bytes: try Fixtures.photo("chelsea.jpg"))])
        defer { server.shutdown() }
        let directory = try Fixtures.temporaryDirectory("front-lookup")
        defer { try? FileManager.default.removeItem(at: directory) }
        let export = try Fixtures.writeUsersExport([(id: "p", name: "Pat Doe", url: server.url("/p.jpg")), (id: "m", name: "Mo Lee", url: nil)], in: directory)
        let cache = directory.appendingPathComponent("cache").path
        let warm = try Binary.run(["warm", export, "--cache", cache, "--allow-private-networks", "--log-level", "error"])
        #expect(warm.status == 0, "\(warm.stderr)")
        // The forms the front parses itself, and those it leaves to swift-argument-parser
        // (help, mistakes, a repeated option): the engine's answers, byte for byte.
        for arguments in [["--cache", cache, "--user", "p", "--json"], ["--cache", cache, "--user", "m", "--json"],
                          ["--cache", cache, "--url", server.url("/p.jpg"), "--json", "--size", "200"],
                          ["--json", "--user=p", "--cache=\(cache)", "--scale=2", "--size=15"],
                          ["--cache", cache, "--user", "p"], ["--cache", cache, "--user", "absent"],
                          ["--cache", cache, "--user", "p", "--scale", "9"], ["--cache", cache, "--user", "p", "--url", "x"],
                          ["--cache", cache, "--user", "m", "--user", "p"], ["--cache", cache], ["--cache", cache, "--user", "p", "--size", "abc"],
                          ["--cache", cache, "--user", "p", "--colour"], ["--help"], ["--cache", "/nonexistent", "--user", "p"]] {
            let fromFront = try Binary.run(["lookup"] + arguments)
            let fromEngine = try Binary.run(["lookup"] + arguments, executable: engine)
            #expect(fromFront.status == fromEngine.status && fromFront.stdout == fromEngine.stdout && fromFront.stderr == fromEngine.stderr,
                    "\(arguments): \(fromFront.status) \(fromFront.stdout) \(fromFront.stderr) against \(fromEngine.status) \(fromEngine.stdout) \(fromEngine.stderr)")
        }
        #expect(Lookup.Request.parseCommonForm(["--cache", cache, "--user", "p"]) != nil)
        #expect(Lookup.Request.parseCommonForm(["--cache", cache, "--user", "p", "--help"]) == nil)
        #expect(Lookup.Request.parseCommonForm(["--cache", cache, "--user", "m", "--user", "p"]) == nil)
        #expect(try Binary.run(["lookup", "--cache", cache, "--user", "absent"]).status == 66)
        let answer = try Binary.run(["lookup", "--cache", cache, "--user", "p", "--json"]).stdout
        #expect(answer.contains("\"thumbHash\""), "\(answer)")

    }

    /// A server keeps one lookup open for its life: once its accesses are written it holds no
    /// lock, so a warm-up's write transaction starts at once.
    @Test func aLookupKeptOpenHoldsNoLockBetweenLookups() async throws {
        let server = try FixtureServer(routes: ["/p.jpg": .ok(bytes: try Fixtures.photo("chelsea.jpg"))])
        defer { server.shutdown() }
        let directory = try Fixtures.temporaryDirectory("lookup-lock")
        defer { try? FileManager.default.removeItem(at: directory) }
        let export = try Fixtures.writeUsersExport([(id: "p", name: "Pat", url: server.url("/p.jpg"))], in: directory)
        let cache = directory.appendingPathComponent("cache")
        _ = try await WarmPipeline(configuration: Fixtures.configuration(exports: [export], cache: cache), logger: .test).run()
        let lookup = try CacheLookup(cache: cache)
        _ = try await lookup.answer(forUser: "p", viewSize: 55, scale: 3)
        await lookup.flush()
        #expect(try Self.writesAtOnce(cache.appendingPathComponent(CacheIndex.fileName).path))
        let notRecording = try CacheLookup(cache: cache, recordsAccess: false)
        _ = try await notRecording.answer(forUser: "p", viewSize: 55, scale: 3)
        #expect(try Self.writesAtOnce(cache.appendingPathComponent(CacheIndex.fileName).path))
        withExtendedLifetime((lookup, notRecording)) {}
    }

    /// Whether a write transaction on the index starts without waiting.
    static func writesAtOnce(_ indexPath: String) throws -> Bool {
        let queue = try DatabaseQueue(path: indexPath)
        defer { try? queue.close() }
        do {
            try queue.inDatabase { try $0.execute(sql: "BEGIN IMMEDIATE; ROLLBACK") }
            return true
        } catch let error as DatabaseError where error.resultCode == .SQLITE_BUSY {
            return false
        }
    }

    /// The index as the version before wrote it: no placeholder columns, no v5 migration.
    static func downgrade(_ indexPath: String) throws {
        let queue = try DatabaseQueue(path: indexPath, configuration: waiting)
        try queue.write { db in
            try db.execute(sql: "ALTER TABLE entry DROP COLUMN placeholderHash; ALTER TABLE entry DROP COLUMN placeholderColor")
            try db.execute(sql: "DELETE FROM grdb_migrations WHERE identifier = ?", arguments: [CacheIndex.placeholderMigration])
        }
        try queue.close()
    }

    /// Waits for a lookup's access, written in the background, as avatar-cache's own
    /// connections do.
    static var waiting: Configuration {
        var configuration = Configuration()
        configuration.busyMode = .timeout(10)
        return configuration
    }

    static func expire(_ indexPath: String, key: String) throws {
        let queue = try DatabaseQueue(path: indexPath, configuration: waiting)
        try queue.write { try $0.execute(sql: "UPDATE entry SET freshUntil = 0 WHERE key = ?", arguments: [key]) }
        try queue.close()
    }

    static func neededLibraries(_ path: String) throws -> [String] {
        let process = Process()
        process.executableURL = URL(fileURLWithPath: "/usr/bin/readelf")
        process.arguments = ["-d", path]
        let pipe = Pipe()
        process.standardOutput = pipe
        try process.run()
        let output = String(decoding: pipe.fileHandleForReading.readDataToEndOfFile(), as: UTF8.self)
        process.waitUntilExit()
        #expect(process.terminationStatus == 0)
        // "(NEEDED)  Shared library: [libsqlite3.so.0]"
        return output.split(separator: "\n").filter { $0.contains("(NEEDED)") }.compactMap { line in
            line.split(separator: "[").last.map { String($0.dropLast()) }
        }
    }
}
