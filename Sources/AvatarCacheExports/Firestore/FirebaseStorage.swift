import AvatarCacheModel
import AvatarCacheSupport
import Foundation

/// Photos kept in Firebase (Cloud) Storage, as apps name them in their documents: a
/// `gs://bucket/path`, a bare storage path (`users/u1/avatar.jpg`, `imagePaths[0]`), or a
/// download URL (`…/v0/b/<bucket>/o/<url-encoded path>?alt=media…`).
///
/// - From an emulator export (`storage_export/`), an object the export carries is read
///   from its blob, with no network: the objects are found as the emulator finds them,
///   by walking `metadata/` (each `<…>.json` names its `bucket` and `name`; its blob is
///   `blobs/<…>`), whatever the layout (a folder per path segment, the name
///   URL-encoded, or a UUID).
/// - Otherwise, when a bucket is known (`--storage-bucket`, or the one the export's
///   `buckets.json` names), a `gs://` URL or a storage path becomes Firebase Storage's
///   public download URL, `https://firebasestorage.googleapis.com/v0/b/<bucket>/o/<path,
///   encoded>?alt=media`, fetched under every network rule like any other URL.
/// - Without either, they are reported as before: not a URL that can be fetched.
public struct FirebaseStorage: Sendable {
    /// The bucket storage paths are in.
    public var bucket: String?
    /// Blob files of the export's objects, by "bucket/name".
    var blobs: [String: String] = [:]
    /// The objects the export's metadata names whose blob is missing: (metadata, name).
    var missingBlobs: [(metadata: String, name: String)] = []

    public init(bucket: String? = nil) {
        self.bucket = bucket.flatMap { Self.bucketName($0) }
    }

    public var isEmpty: Bool { bucket == nil && blobs.isEmpty }

    /// `my-app.appspot.com` of `gs://my-app.appspot.com/` or `my-app.appspot.com`.
    static func bucketName(_ text: String) -> String? {
        var name = text.trimmingCharacters(in: .whitespaces)
        if name.lowercased().hasPrefix("gs://") { name = String(name.dropFirst(5)) }
        while name.hasSuffix("/") { name.removeLast() }
        return name.isEmpty || name.contains("/") ? nil : name
    }

    /// Reads an emulator export's `storage_export` folder: its objects and, unless one is
    /// given, its bucket (the only one `buckets.json` lists, else the app's default:
    /// `*.firebasestorage.app` or `*.appspot.com`).
    mutating func add(exportFolder folder: String) {
        let metadata = (folder as NSString).appendingPathComponent("metadata")
        let blobFolder = (folder as NSString).appendingPathComponent("blobs")
        if let enumerator = FileManager.default.enumerator(atPath: metadata) {
            while let relative = enumerator.nextObject() as? String {
                guard relative.hasSuffix(".json") else { continue }
                let file = (metadata as NSString).appendingPathComponent(relative)
                struct Object: Decodable { var name: String?; var bucket: String? }
                guard let data = FileManager.default.contents(atPath: file),
                      let object = try? JSONDecoder().decode(Object.self, from: data),
                      let name = object.name, let objectBucket = object.bucket, !name.hasSuffix("/") else { continue }
                let blob = (blobFolder as NSString).appendingPathComponent(String(relative.dropLast(5)))
                if FirestoreExport.isRegularFile(blob) {
                    blobs["\(objectBucket)/\(name)"] = blob
                } else {
                    missingBlobs.append((file, name))
                }
            }
        }
        guard bucket == nil else { return }
        struct Buckets: Decodable { struct Bucket: Decodable { var id: String }; var buckets: [Bucket] }
        if let data = FileManager.default.contents(atPath: (folder as NSString).appendingPathComponent("buckets.json")),
           let ids = (try? JSONDecoder().decode(Buckets.self, from: data))?.buckets.map(\.id), !ids.isEmpty {
            bucket = ids.count == 1 ? ids[0] : ids.first { $0.hasSuffix(".firebasestorage.app") } ?? ids.first { $0.hasSuffix(".appspot.com") }
        }
    }

    /// A reference resolved: the blob's bytes, a download URL, or nil when this is not a
    /// Storage reference (or no bucket is known for it).
    func resolve(_ text: String, limits: ReaderLimits) -> Result<PhotoSource, PhotoValue.Problem>? {
        // Every photo URL of a document passes here: a URL only matters when the export
        // carries objects it could name (the common case, a bucket and no blobs, parses none).
        if blobs.isEmpty {
            let scheme = text.prefix(8).lowercased()
            if scheme.hasPrefix("http://") || scheme.hasPrefix("https://") { return nil }
        }
        guard let (objectBucket, name) = object(text) else { return nil }
        if let blob = blob(bucket: objectBucket, name: name) {
            return read(blob, name: name, limits: limits)
        }
        // A download URL stays what it is (its own host, its own token).
        if text.lowercased().hasPrefix("http") { return nil }
        guard let target = objectBucket ?? bucket else { return nil }
        return .success(.url(Self.downloadURL(bucket: target, name: name), sendMonicaToken: false))
    }

    /// The blob of an object: in its bucket, else (a storage path) the default bucket's,
    /// else the one bucket's the export holds objects of.
    private func blob(bucket objectBucket: String?, name: String) -> String? {
        guard !blobs.isEmpty else { return nil }
        if let objectBucket { return blobs["\(objectBucket)/\(name)"] }
        if let bucket, let found = blobs["\(bucket)/\(name)"] { return found }
        let buckets = Set(blobs.keys.map { $0.prefix { $0 != "/" } })
        guard buckets.count == 1, let only = buckets.first else { return nil }
        return blobs["\(only)/\(name)"]
    }

    /// The bucket (nil: the default one) and object name a reference names.
    func object(_ text: String) -> (bucket: String?, name: String)? {
        let trimmed = text.trimmingCharacters(in: .whitespaces)
        let lower = trimmed.lowercased()
        if lower.hasPrefix("gs://") {
            let rest = trimmed.dropFirst(5)
            guard let slash = rest.firstIndex(of: "/") else { return nil }
            let name = String(rest[rest.index(after: slash)...])
            return name.isEmpty ? nil : (String(rest[..<slash]), name)
        }
        if lower.hasPrefix("http://") || lower.hasPrefix("https://") {
            // …/v0/b/<bucket>/o/<encoded name>[?…], on any host (the emulator's or Google's).
            guard let components = URLComponents(string: trimmed), let range = components.percentEncodedPath.range(of: "/v0/b/") else { return nil }
            let rest = components.percentEncodedPath[range.upperBound...]
            guard let marker = rest.range(of: "/o/") else { return nil }
            let name = String(rest[marker.upperBound...]).removingPercentEncoding ?? ""
            return name.isEmpty ? nil : (String(rest[..<marker.lowerBound]).removingPercentEncoding, name)
        }
        // A storage path: no scheme (`data:`, `tel:`, `C:`), no leading slash, no dot
        // segment, at most 1,024 bytes, and shaped as one: a file name with an extension
        // (`avatar.jpg`) or folders of real names (`avatars/u1`), not "N/A" or "default".
        let components = trimmed.split(separator: "/", omittingEmptySubsequences: false)
        guard !trimmed.isEmpty, trimmed.utf8.count <= 1024, !trimmed.hasPrefix("/"),
              !hasScheme(trimmed),
              !components.contains(where: { $0 == ".." || $0 == "." || $0.isEmpty }) else { return nil }
        let last = components.last ?? ""
        let hasExtension = last.contains(".") && !last.hasPrefix(".") && !last.hasSuffix(".")
        guard hasExtension || (components.count >= 2 && components.allSatisfy { $0.count >= 2 }) else { return nil }
        return (nil, trimmed)
    }

    /// `scheme:` at the start (any case), as URLs and URIs begin.
    private func hasScheme(_ text: String) -> Bool {
        guard let colon = text.firstIndex(of: ":"), colon != text.startIndex else { return false }
        let scheme = text[..<colon]
        return scheme.first!.isLetter && scheme.allSatisfy { $0.isLetter || $0.isNumber || "+.-".contains($0) }
    }

    /// Firebase Storage's download URL: the bucket and the name each encoded as one path
    /// segment (`/` as `%2F`), as `encodeURIComponent` does.
    static func downloadURL(bucket: String, name: String) -> String {
        "https://firebasestorage.googleapis.com/v0/b/\(encodeComponent(bucket))/o/\(encodeComponent(name))?alt=media"
    }

    static func encodeComponent(_ text: String) -> String {
        let kept = Set("-_.!~*'()".utf8)
        var out = ""
        for byte in text.utf8 {
            if (byte >= 0x30 && byte <= 0x39) || (byte >= 0x41 && byte <= 0x5A) || (byte >= 0x61 && byte <= 0x7A) || kept.contains(byte) {
                out.unicodeScalars.append(UnicodeScalar(byte))
            } else {
                out += String(format: "%%%02X", byte)
            }
        }
        return out
    }

    private func read(_ blob: String, name: String, limits: ReaderLimits) -> Result<PhotoSource, PhotoValue.Problem> {
        guard let size = ExportFormat.regularFileSize(blob) else {
            return .failure(PhotoValue.Problem(description: "the Storage object \"\(abbreviated(name, limit: 80))\": its blob is not a regular file"))
        }
        guard size <= limits.maxInlineBytes else {
            return .failure(PhotoValue.Problem(description: "the Storage object \"\(abbreviated(name, limit: 80))\" in the export is \(size) bytes, more than \(limits.maxInlineBytes)"))
        }
        guard let data = FileManager.default.contents(atPath: blob) else {
            return .failure(PhotoValue.Problem(description: "the Storage object \"\(abbreviated(name, limit: 80))\": its blob \(blob) cannot be read"))
        }
        guard !data.isEmpty else {
            return .failure(PhotoValue.Problem(description: "the Storage object \"\(abbreviated(name, limit: 80))\" in the export is empty"))
        }
        return .success(.inline(InlinePhoto(bytes: [UInt8](data))))
    }
}
