import AsyncHTTPClient
@testable import AvatarCacheLookup
@testable import AvatarCachePipeline
import AvatarCacheTestKit
import AvatarCacheTestSupport
import Foundation
import NIOCore
import NIOHTTP1
import Testing

/// docs/embedding.md's example server (`Examples/lookup-route`), built against
/// AvatarCacheLookup alone, asked over real HTTP on 127.0.0.1: files with ETag and 304,
/// JSON for apps that draw the initials, 404 for unknown users, 400 for bad sizes, and a
/// 503 whose reason is logged.
@Suite(.serialized) struct LookupRouteTests {
    /// The example, started on a port the system picks; stopped by its pid.
    struct RunningRoute {
        let process: Process
        let base: String
        let errors: Pipe

        init(cache: URL) throws {
            let example = Binary.url.deletingLastPathComponent().appendingPathComponent("lookup-route")
            let (process, out, errors) = try Binary.start(["--cache", cache.path, "--host", "127.0.0.1", "--port", "0"], executable: example)
            self.process = process
            self.errors = errors
            var line = Data()
            while !line.contains(UInt8(ascii: "\n")) {
                let more = out.fileHandleForReading.availableData
                guard !more.isEmpty else { break }
                line += more
            }
            let text = String(decoding: line, as: UTF8.self).trimmingCharacters(in: .whitespacesAndNewlines)
            guard text.hasPrefix("listening on http://127.0.0.1:") else {
                process.terminate()
                throw CocoaError(.fileReadUnknown, userInfo: [NSLocalizedDescriptionKey: "lookup-route said \(text)"])
            }
            base = String(text.dropFirst("listening on ".count))
        }

        func stop() -> String {
            kill(process.processIdentifier, SIGTERM)
            process.waitUntilExit()
            return String(decoding: errors.fileHandleForReading.readDataToEndOfFile(), as: UTF8.self)
        }
    }

    func get(_ client: HTTPClient, _ url: String, method: HTTPMethod = .GET, headers: [(String, String)] = []) async throws -> (status: Int, headers: HTTPHeaders, body: [UInt8]) {
        var request = HTTPClientRequest(url: url)
        request.method = method
        for (name, value) in headers { request.headers.add(name: name, value: value) }
        let response = try await client.execute(request, timeout: .seconds(10))
        let body = try await response.body.collect(upTo: 10 << 20)
        return (Int(response.status.code), response.headers, Array(body.readableBytesView))
    }

    @Test func theExampleServerAnswersFilesETagsAndErrorsOverHTTP() async throws {
        // 1,411 px: a 330 and a 900 px tier, each its own file.
        let server = try FixtureServer(routes: ["/p.jpg": .ok(bytes: try Fixtures.photo("retina.jpg"))])
        defer { server.shutdown() }
        let directory = try Fixtures.temporaryDirectory("lookup-route")
        defer { try? FileManager.default.removeItem(at: directory) }
        let export = try Fixtures.writeUsersExport([(id: "p", name: "Pat Doe", url: server.url("/p.jpg")), (id: "m", name: "Mo Ray", url: nil)], in: directory)
        let cache = directory.appendingPathComponent("cache")
        _ = try await WarmPipeline(configuration: Fixtures.configuration(exports: [export], cache: cache), logger: .test).run()
        let expected = try CacheLookup(cache: cache, recordsAccess: false)
        let photo = try await expected.answer(forUser: "p", viewSize: 55, scale: 3)
        let monogram = try await expected.answer(forUser: "m", viewSize: 55, scale: 3)
        let photoFile = try #require(photo.file)
        let monogramFile = try #require(monogram.file)

        // Built against the lookup alone: no image library among what it loads.
        let example = Binary.url.deletingLastPathComponent().appendingPathComponent("lookup-route")
        let needed = try PlaceholderTests.neededLibraries(example.path)
        #expect(!needed.contains { $0.contains("vips") || $0.contains("jpeg") || $0.contains("glib") || $0.contains("ssl") }, "\(needed)")

        let route = try RunningRoute(cache: cache)
        let client = HTTPClient(eventLoopGroupProvider: .singleton)
        do {
            let first = try await get(client, route.base + "/avatars/p?size=55&scale=3")
            #expect(first.status == 200)
            let photoBytes = [UInt8](try Data(contentsOf: photoFile))
            #expect(first.body == photoBytes, "the tier's file, byte for byte")
            #expect(first.headers["Content-Type"].first == (photoFile.pathExtension == "png" ? "image/png" : photoFile.pathExtension == "webp" ? "image/webp" : "image/jpeg"))
            let etag = try #require(first.headers["ETag"].first)
            #expect(etag == "\"\(photoFile.lastPathComponent)\"")
            #expect(first.headers["Cache-Control"].first?.contains("max-age") == true)

            let again = try await get(client, route.base + "/avatars/p?size=55&scale=3", headers: [("If-None-Match", etag)])
            #expect(again.status == 304 && again.body.isEmpty && again.headers["ETag"].first == etag)
            let weak = try await get(client, route.base + "/avatars/p?size=55&scale=3", headers: [("If-None-Match", "\"other\", W/\(etag)")])
            #expect(weak.status == 304, "If-None-Match compares weakly, in a list")
            let withNUL = try await get(client, route.base + "/avatars/p%00x")
            #expect(withNUL.status == 404, "an id with a NUL byte is another id, not \"p\"")
            let larger = try await get(client, route.base + "/avatars/p?size=200&scale=3", headers: [("If-None-Match", etag)])
            let largerFile = try #require(try await expected.answer(forUser: "p", viewSize: 200, scale: 3).file)
            #expect(largerFile != photoFile, "the 900 px tier has a file of its own")
            #expect(larger.status == 200 && larger.headers["ETag"].first != etag, "another tier, another validator")

            let drawn = try await get(client, route.base + "/avatars/m")
            let monogramBytes = [UInt8](try Data(contentsOf: monogramFile))
            #expect(drawn.status == 200 && drawn.body == monogramBytes)
            #expect(drawn.headers["Content-Type"].first == "image/png")

            let json = try await get(client, route.base + "/avatars/m", headers: [("Accept", "application/json")])
            struct Shown: Decodable { var kind: String; var initials: String?; var color: String?; var textColor: String?; var file: String? }
            let shown = try JSONDecoder().decode(Shown.self, from: Data(json.body))
            #expect(json.status == 200 && shown.kind == "monogram" && shown.initials == monogram.initials && shown.color == monogram.color)
            #expect(shown.textColor == monogram.textColor && shown.file == monogramFile.path)

            let head = try await get(client, route.base + "/avatars/p", method: .HEAD)
            #expect(head.status == 200 && head.body.isEmpty && head.headers["Content-Length"].first == String(first.body.count))

            let unknown = try await get(client, route.base + "/avatars/nobody")
            #expect(unknown.status == 404 && String(decoding: unknown.body, as: UTF8.self).contains("nobody"))
            let badSize = try await get(client, route.base + "/avatars/p?size=-5")
            #expect(badSize.status == 400 && String(decoding: badSize.body, as: UTF8.self).contains("view size"))
            let badScale = try await get(client, route.base + "/avatars/p?scale=12")
            #expect(badScale.status == 400)
            let posted = try await get(client, route.base + "/avatars/p", method: .POST)
            #expect(posted.status == 405 && posted.headers["Allow"].first == "GET, HEAD")
            let elsewhere = try await get(client, route.base + "/other")
            #expect(elsewhere.status == 404)

            // A file pruned between the answer and the read (another process pruned it):
            // 503, and the reason in the server's log.
            try FileManager.default.removeItem(at: photoFile)
            let gone = try await get(client, route.base + "/avatars/p")
            #expect(gone.status == 503 && String(decoding: gone.body, as: UTF8.self).contains("try again"))
        } catch {
            try await client.shutdown()
            _ = route.stop()
            throw error
        }
        try await client.shutdown()
        let log = route.stop()
        #expect(log.contains(photoFile.path) && log.contains("went away"), "\(log)")
    }
}
