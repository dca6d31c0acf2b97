import Foundation
import Testing
import AvatarCacheModel
@testable import AvatarCacheSupport

/// Sizes as operators write them (`--budget 100MB`) and as the outputs print them.
struct ByteSizeTests {
    @Test(arguments: [
        ("100MB", 100_000_000), ("512KB", 512_000), ("2GB", 2_000_000_000), ("1.5MB", 1_500_000), ("20000000", 20_000_000),
        ("1KiB", 1024), ("3MiB", 3 * 1024 * 1024), ("1GiB", 1 << 30), ("10k", 10_000), ("2m", 2_000_000), ("1g", 1_000_000_000),
        ("64b", 64), (" 7 mb ", 7_000_000), ("0", 0), ("0.5KB", 500),
    ] as [(String, Int64)])
    func sizesAsPeopleWriteThem(text: String, bytes: Int64) {
        #expect(ByteSize.parse(text) == bytes)
    }

    @Test func whatIsNotASizeIsRefused() {
        for text in ["", "MB", "lots", "-1MB", "1TB", "nan", "inf", "1e30", "10 000", "1.2.3KB"] {
            #expect(ByteSize.parse(text) == nil, "\(text)")
        }
    }

    @Test func formattedInPowersOfAThousandLikeTheParse() {
        #expect(ByteSize.format(999) == "999 B")
        #expect(ByteSize.format(1_000) == "1.0 KB")
        #expect(ByteSize.format(1_560_000) == "1.6 MB")
        #expect(ByteSize.format(2_000_000_000) == "2.00 GB")
        #expect(ByteSize.format(0) == "0 B")
        for bytes: Int64 in [5_000, 250_000_000, 3_000_000_000] {
            let text = ByteSize.format(bytes).replacingOccurrences(of: " ", with: "")
            #expect(ByteSize.parse(text) == bytes, "\(text) reads back")
        }
    }
}

/// No credential in an output, no input copied whole into one.
struct RedactionTests {
    @Test func userInfoIsTakenOutOfAURL() {
        #expect(redactedURL("https://user:s3cret@photos.example.com/a.jpg?x=1") == "https://photos.example.com/a.jpg?x=1")
        #expect(redactedURL("https://token@photos.example.com/a.jpg") == "https://photos.example.com/a.jpg")
        #expect(redactedURL("https://photos.example.com/a@2x.jpg") == "https://photos.example.com/a@2x.jpg", "an @ in the path is no user")
        #expect(redactedURL("https://photos.example.com/a.jpg") == "https://photos.example.com/a.jpg")
        #expect(redactedURL("not a url @ all") == "not a url @ all")
    }

    @Test func aLongTextIsCutAndAHashKeepsTwoApart() {
        let base = "https://photos.example.com/" + String(repeating: "a", count: 2_000)
        let one = shownURL(base + "1"), two = shownURL(base + "2")
        #expect(one != two)
        #expect(one.hasPrefix(String(base.prefix(200)) + "…(2028 characters, sha256 "))
        #expect(one.count < ShownText.maxURLCharacters)
        #expect(shownURL("https://user:pw@photos.example.com/a.jpg") == "https://photos.example.com/a.jpg")
        #expect(abbreviated("short", limit: 10) == "short")
        // A limit under 300: the text kept is the limit less 100 characters.
        #expect(abbreviated(String(repeating: "x", count: 500), limit: 150).hasPrefix(String(repeating: "x", count: 50) + "…(500 characters"))
        // A reason is cut at its own limit.
        let failure = SourceFailure(.httpStatus, String(repeating: "r", count: 5_000))
        #expect(failure.reason.count < ShownText.maxReasonCharacters && failure.description.hasPrefix("httpStatus: rrr"))
    }

    @Test func whitespaceIsTrimmedAtTheEndsAlone() {
        #expect(" \t a b \n".trimmedWhitespace == "a b")
        #expect("\u{200B}\u{00A0}name\u{3000}".trimmedWhitespace == "name")
        #expect("plain".trimmedWhitespace == "plain")
        #expect("   ".trimmedWhitespace == "")
        #expect("".trimmedWhitespace == "")
        for text in ["\u{2028}x y\u{2029}", " é ", "\r\n", "a\u{200B}"] {
            #expect(text.trimmedWhitespace == text.trimmingCharacters(in: .whitespacesAndNewlines), "\(text.unicodeScalars.map(\.value))")
        }
    }
}

/// `--shard i/n`: parsed, refused in words, and the partition the same on every machine.
struct ShardTests {
    @Test func parsedFromIOverN() throws {
        let shard = try Shard(parsing: "2/3")
        #expect(shard.index == 2 && shard.count == 3 && shard.description == "2/3")
        #expect(try Shard(parsing: " 0 / 1 ") == Shard(index: 0, count: 1))
    }

    @Test func mistakesAreRefusedInWords() {
        func refusal(_ text: String) -> String? {
            do { _ = try Shard(parsing: text); return nil } catch let error as ConfigurationError { return error.message } catch { return "\(error)" }
        }
        #expect(refusal("3/3")?.contains("the index must be between 0 and 2 (shards are numbered from 0)") == true)
        #expect(refusal("0/0")?.contains("the count must be between 1 and 100000") == true)
        #expect(refusal("0/100001")?.contains("the count must be between 1") == true)
        #expect(refusal("-1/3")?.contains("the index must be between 0 and 2") == true)
        for text in ["1", "1/2/3", "a/b", "", "1/"] {
            #expect(refusal(text)?.contains("--shard takes i/n") == true, "\(text)")
        }
    }

    @Test func everyKeyGoesToOneShardAndTheShardsShareTheKeys() throws {
        // SHA-256's first eight bytes, big-endian, modulo the count: fixed for a key.
        #expect(Shard.of(key: "abc", count: 1) == 0)
        let digest = Digests.sha256(Array("abc".utf8))
        let prefix = digest.prefix(8).reduce(UInt64(0)) { $0 << 8 | UInt64($1) }
        #expect(Shard.of(key: "abc", count: 7) == Int(prefix % 7))
        let keys = (0..<3000).map { "https://photos.example.com/\($0).jpg" }
        let counts = Dictionary(grouping: keys) { Shard.of(key: $0, count: 3) }.mapValues(\.count)
        #expect(counts.keys.sorted() == [0, 1, 2])
        #expect(counts.values.allSatisfy { $0 > 850 && $0 < 1150 }, "\(counts)")

        let shards = try (0..<3).map { try Shard(index: $0, count: 3) }
        let photo = Profile(id: "u1", displayName: "Ann", decidedInitials: "AN", glyph: nil,
                            photo: .url(keys[42], sendMonicaToken: false), validatedColorHex: nil)
        let noPhoto = Profile(id: "u2", displayName: "Bo", decidedInitials: "BO", glyph: nil, photo: nil, validatedColorHex: nil)
        #expect(shards.filter { $0.owns(photo) }.map(\.index) == [Shard.of(key: keys[42], count: 3)], "by its photo's key")
        #expect(shards.filter { $0.owns(noPhoto) }.map(\.index) == [Shard.of(key: "u2", count: 3)], "by its id")
        #expect(try Shard(index: 0, count: 1).owns(noPhoto))
    }
}

/// What a source's first bytes say it is: nothing else reaches a decoder.
struct ImageFormatTests {
    func sniff(_ bytes: [UInt8]) -> ImageFormat? { bytes.withUnsafeBytes { ImageFormat.sniff($0) } }
    func told(_ bytes: [UInt8]) -> String { bytes.withUnsafeBytes { ImageFormat.unsupportedDescription($0) } }

    @Test func theFormatsDecodedAreKnownByTheirFirstBytes() {
        #expect(sniff([0xFF, 0xD8, 0xFF, 0xE0]) == .jpeg)
        #expect(sniff([0x89, 0x50, 0x4E, 0x47, 0x0D, 0x0A, 0x1A, 0x0A, 0]) == .png)
        #expect(sniff(Array("RIFF\u{0}\u{0}\u{0}\u{0}WEBPVP8 ".utf8)) == .webp)
        #expect(sniff(Array("GIF89a".utf8)) == .gif && sniff(Array("GIF87a".utf8)) == .gif)
        #expect(sniff([0x49, 0x49, 0x2A, 0x00]) == .tiff && sniff([0x4D, 0x4D, 0x00, 0x2A]) == .tiff)
        #expect(sniff([0, 0, 0, 24] + Array("ftypheic".utf8)) == .heif)
        #expect(sniff([0, 0, 0, 24] + Array("ftypavif".utf8)) == .heif)
        // A BMP by "BM" and a header size Windows or OS/2 writes.
        var bmp: [UInt8] = [0x42, 0x4D] + [UInt8](repeating: 0, count: 16)
        bmp[14] = 40
        #expect(sniff(bmp) == .bmp)
        bmp[14] = 41
        #expect(sniff(bmp) == nil)
    }

    @Test func whatIsRefusedIsNamed() {
        #expect(sniff([]) == nil && told([]) == "empty body")
        #expect(sniff(Array("%PDF-1.7".utf8)) == nil && told(Array("%PDF-1.7".utf8)) == "PDF document")
        #expect(told(Array("<?xml version=\"1.0\"?><svg xmlns=\"x\">".utf8)) == "SVG image")
        #expect(told(Array("<!DOCTYPE html><html>".utf8)) == "HTML page")
        #expect(sniff([0, 0, 0, 24] + Array("ftypmp42".utf8)) == nil)
        #expect(told([0, 0, 0, 24] + Array("ftypmp42".utf8)) == "ISO media file that is not HEIC/AVIF")
        #expect(told([1, 2, 3]) == "not a JPEG, PNG, WebP, GIF or HEIC/AVIF image")
        #expect(OutputFormat.allCases.map(\.fileExtension).allSatisfy { !$0.isEmpty })
    }
}

/// The failure classes the report counts by, and which of them pass by themselves.
struct FailureClassTests {
    @Test func transientAndLocalClasses() {
        #expect(FailureClass.allCases.filter(\.isTransient).sorted() == [.httpStatus, .network, .rateLimited, .timeout])
        #expect(FailureClass.allCases.filter(\.isDecidedLocally).sorted() == [.blocked, .invalidURL])
        #expect(FailureClass.allCases.sorted().map(\.rawValue) == FailureClass.allCases.map(\.rawValue).sorted())
    }
}

/// The version every output names: the number, and the commit the build was told.
struct VersionTests {
    @Test func theNumberThenTheCommitAsBuildMetadata() throws {
        let number = AvatarCacheVersion.number.split(separator: ".")
        #expect(number.count == 3 && number.allSatisfy { Int($0) != nil }, "\(AvatarCacheVersion.number)")
        if let commit = AvatarCacheVersion.commit {
            #expect(AvatarCacheVersion.string == "\(AvatarCacheVersion.number)+g\(commit)")
            #expect(commit.wholeMatch(of: #/[0-9a-f]{12}(\.dirty)?/#) != nil, "\(commit)")
        } else {
            #expect(AvatarCacheVersion.string == AvatarCacheVersion.number)
        }
    }
}
