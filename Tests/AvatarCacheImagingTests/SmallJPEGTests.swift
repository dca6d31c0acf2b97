import CVips
import CVipsShim
import CVipsShimTesting
import Foundation
import Testing
@testable import AvatarCacheImaging
import AvatarCacheTestKit

/// The one-call path for account photos (SmallJPEG.c): what it takes, it writes byte for
/// byte as the general path does; everything else (and anything damaged) it leaves to the
/// general path, which gives the same results and reasons as without it.
@Suite struct SmallJPEGTests {
    static let tiers = [330, 900]
    let fast = AvatarRenderer(tiers: tiers, maxPixels: 50_000_000)
    var general: AvatarRenderer {
        var renderer = AvatarRenderer(tiers: Self.tiers, maxPixels: 50_000_000)
        renderer.smallJPEGPath = false
        return renderer
    }

    /// Square baseline and progressive, landscape, portrait (rows skipped above the
    /// square), odd-sized, grey, 4:4:4, a little EXIF with orientation 1 in either byte
    /// order, a square as large as the smallest tier.
    static let taken = ["account-96.jpg", "account-200-progressive.jpg", "account-160x106.jpg", "account-106x160.jpg",
                        "account-97x131.jpg", "account-grey-128.jpg", "account-444-144.jpg", "account-exif1-120.jpg",
                        "account-exif1-le-112.jpg", "account-330.jpg"]
    /// Orientation 6, two Orientation entries (6 then 1: libexif keeps the first), an ICC
    /// profile, CMYK without a profile, a square one pixel larger than the smallest tier.
    static let left = ["account-exif6-120.jpg", "account-exif61-104.jpg", "account-icc-120.jpg", "account-cmyk-120.jpg",
                       "account-331.jpg"]

    /// An account-photo fixture (scripts/make-account-fixtures).
    static func account(_ name: String) throws -> [UInt8] {
        try [UInt8](Data(contentsOf: Fixtures.file("photos/\(name)")))
    }

    /// Renders `bytes` both ways; returns them and how many photos the small path took.
    func both(_ bytes: [UInt8]) throws -> (fast: RenderedAvatar, general: RenderedAvatar, taken: Int64) {
        let before = cvipsshim_small_jpeg_rendered()
        let fastResult = try fast.render(bytes)
        let taken = cvipsshim_small_jpeg_rendered() - before
        let generalResult = try general.render(bytes)
        #expect(cvipsshim_small_jpeg_rendered() - before == taken, "the general renderer took the small path")
        return (fastResult, generalResult, taken)
    }

    func expectSame(_ a: RenderedAvatar, _ b: RenderedAvatar, _ name: String) {
        #expect(a.format == b.format, "\(name)")
        #expect(a.sourceWidth == b.sourceWidth && a.sourceHeight == b.sourceHeight, "\(name)")
        #expect(a.tiers.map(\.tier) == b.tiers.map(\.tier), "\(name)")
        #expect(a.tiers.map(\.side) == b.tiers.map(\.side), "\(name)")
        #expect(a.tiers.map(\.bytes) == b.tiers.map(\.bytes), "\(name): the files differ")
        #expect(a.placeholder == b.placeholder, "\(name)")
        #expect(a.warning == b.warning, "\(name)")
    }

    @Test(arguments: taken) func takenAndWrittenAsTheGeneralPathWrites(_ name: String) throws {
        let (fastResult, generalResult, taken) = try both(try Self.account(name))
        #expect(taken == 1, "\(name) went the general way")
        expectSame(fastResult, generalResult, name)
        // Every tier is the square itself: one encode, the same bytes for both.
        #expect(Set(fastResult.tiers.map(\.side)).count == 1)
        #expect(fastResult.tiers[0].bytes == fastResult.tiers[1].bytes)
        #expect(fastResult.placeholder?.thumbHash?.isEmpty == false)
    }

    @Test(arguments: left) func leftToTheGeneralPath(_ name: String) throws {
        let (fastResult, generalResult, taken) = try both(try Self.account(name))
        #expect(taken == 0, "\(name) took the small path")
        expectSame(fastResult, generalResult, name)
    }

    @Test func orientationIsStillApplied() throws {
        // Stored turned, tagged 6: the general path turns it upright, as before; with a
        // second entry saying 1 after it, too.
        for name in ["account-exif6-120.jpg", "account-exif61-104.jpg"] {
            let bytes = try Self.account(name)
            let upright = try fast.render(bytes)
            var ignoring = AvatarRenderer(tiers: Self.tiers, maxPixels: 50_000_000)
            ignoring.smallJPEGPath = false
            let stripped = try ignoring.render(Self.withoutEXIF(bytes))
            #expect(upright.tiers[0].bytes != stripped.tiers[0].bytes, "\(name) was not turned")
        }
    }

    /// `bytes` without its APP1 (EXIF) segments.
    static func withoutEXIF(_ bytes: [UInt8]) -> [UInt8] {
        var out = Array(bytes.prefix(2)), index = 2
        while index + 4 <= bytes.count, bytes[index] == 0xFF, bytes[index + 1] != 0xDA {
            let length = Int(bytes[index + 2]) << 8 | Int(bytes[index + 3])
            if bytes[index + 1] != 0xE1 { out += bytes[index..<min(bytes.count, index + 2 + length)] }
            index += 2 + length
        }
        return out + bytes[min(index, bytes.count)...]
    }

    /// `bytes` without its segments of marker `marker` (before the scan).
    static func without(marker: UInt8, _ bytes: [UInt8]) -> [UInt8] {
        var out = Array(bytes.prefix(2)), index = 2
        while index + 4 <= bytes.count, bytes[index] == 0xFF, bytes[index + 1] != 0xDA {
            let length = Int(bytes[index + 2]) << 8 | Int(bytes[index + 3])
            if bytes[index + 1] != marker { out += bytes[index..<min(bytes.count, index + 2 + length)] }
            index += 2 + length
        }
        return out + bytes[min(index, bytes.count)...]
    }

    @Test func aFileWithoutTablesIsReadAsAFreshDecoderReadsIt() throws {
        // After a photo on the same thread: no quantization table is refused as before (a
        // decoder kept from the last photo would have used its table); no Huffman table is
        // read with the standard ones (Motion-JPEG frames), as the general path reads it.
        let normal = try Self.account("account-96.jpg")
        _ = try fast.render(try Self.account("account-200-progressive.jpg"))
        let noQuantization = Self.without(marker: 0xDB, normal)
        #expect(noQuantization.count < normal.count)
        let fastError = failure(fast, noQuantization), generalError = failure(general, noQuantization)
        #expect(fastError != nil, "a JPEG without its quantization tables rendered")
        #expect(fastError == generalError)
        _ = try fast.render(try Self.account("account-200-progressive.jpg"))
        let noHuffman = Self.without(marker: 0xC4, normal)
        #expect(noHuffman.count < normal.count)
        #expect(failure(fast, noHuffman) == failure(general, noHuffman))
        if failure(general, noHuffman) == nil {
            expectSame(try fast.render(noHuffman), try general.render(noHuffman), "no Huffman tables")
        }
    }

    /// The error `render` throws, as text (nil when it renders).
    func failure(_ renderer: AvatarRenderer, _ bytes: [UInt8]) -> String? {
        do {
            _ = try renderer.render(bytes)
            return nil
        } catch {
            return "\(error)"
        }
    }

    @Test func aCutFileFailsAsBeforeWithItsReason() throws {
        let whole = try Self.account("account-200-progressive.jpg")
        for length in [whole.count / 2, whole.count - 40, 400] {
            let cut = Array(whole.prefix(length))
            let before = cvipsshim_small_jpeg_rendered()
            let fastError = failure(fast, cut), generalError = failure(general, cut)
            #expect(fastError != nil, "a file cut at \(length) bytes rendered")
            #expect(fastError == generalError)
            #expect(cvipsshim_small_jpeg_rendered() == before)
        }
    }

    @Test func aHeaderThatLiesAboutItsSizeGoesTheGeneralWay() throws {
        // The frame header says twice the rows the data holds: libjpeg runs into the
        // end-of-image marker, warns and fills the rest; the general path decodes it past
        // the damage, with libjpeg's words, as before.
        var bytes = try Self.account("account-96.jpg")
        let sof = try #require(bytes.indices.dropLast(8).first { bytes[$0] == 0xFF && bytes[$0 + 1] == 0xC0 })
        bytes[sof + 5] = 0; bytes[sof + 6] = 192
        let (fastResult, generalResult, taken) = try both(bytes)
        #expect(taken == 0)
        #expect(fastResult.warning != nil)
        #expect(fastResult.sourceHeight == 192)
        expectSame(fastResult, generalResult, "a lying header")
    }

    @Test func damageLibjpegRecoversFromIsReportedAsBefore() throws {
        // A scan cut short, the end-of-image marker after it (as a bad copy leaves it):
        // decoded past the damage by the general path, with libjpeg's warning.
        let whole = try Self.account("account-200-progressive.jpg")
        let bytes = Array(whole.prefix(whole.count * 6 / 10)) + [0xFF, 0xD9]
        let (fastResult, generalResult, taken) = try both(bytes)
        #expect(taken == 0)
        #expect(fastResult.warning != nil)
        expectSame(fastResult, generalResult, "a scan cut short")
    }

    @Test func aLongStripGoesTheGeneralWay() throws {
        // 65,500 × 1: its short side is small, but it is not an account photo.
        let width = 65_500
        let pixels = [UInt8](repeating: 128, count: width * 3)
        let image = try #require(pixels.withUnsafeBytes {
            vips_image_new_from_memory_copy($0.baseAddress, $0.count, Int32(width), 1, 3, VIPS_FORMAT_UCHAR)
        })
        defer { g_object_unref(image) }
        var buffer: UnsafeMutableRawPointer?
        var length = 0
        #expect(cvipsshim_jpeg_encode(image, 82, &buffer, &length) == CVIPSSHIM_OK)
        let jpeg = Array(UnsafeRawBufferPointer(start: buffer, count: length))
        g_free(buffer)
        let (fastResult, generalResult, taken) = try both(jpeg)
        #expect(taken == 0)
        expectSame(fastResult, generalResult, "65,500 × 1")
        #expect(fastResult.tiers.map(\.side) == [1, 1])
    }

    @Test func overThePixelLimitFailsAsBefore() throws {
        let bytes = try Self.account("account-96.jpg")
        var tight = AvatarRenderer(tiers: Self.tiers, maxPixels: 96 * 96 - 1)
        let fastError = failure(tight, bytes)
        tight.smallJPEGPath = false
        #expect(fastError != nil && fastError == failure(tight, bytes))
    }

    @Test func aThreadKeepsNothingOfOnePhotoForTheNext() throws {
        // The thread's buffers and libjpeg objects are reused: photos of other sizes in
        // turn, a failure between them, each as it is alone.
        let names = ["account-200-progressive.jpg", "account-96.jpg", "account-grey-128.jpg", "account-160x106.jpg"]
        let alone = try names.map { try general.render(try Self.account($0)) }
        for round in 0..<3 {
            for (index, name) in names.enumerated() {
                expectSame(try fast.render(try Self.account(name)), alone[index], "\(name), round \(round)")
                _ = failure(fast, Array(try Self.account(name).prefix(300)))
            }
        }
    }

    @Test func threadsRenderAtOnce() async throws {
        let names = Self.taken
        let expected = try names.map { try general.render(try Self.account($0)).tiers.map(\.bytes) }
        let pool = DecodeWorkerPool(threads: 4)
        defer { pool.shutdown() }
        let renderer = fast
        try await withThrowingTaskGroup(of: (Int, [[UInt8]], Int64).self) { group in
            for round in 0..<40 {
                let index = round % names.count
                let bytes = try Self.account(names[index])
                group.addTask {
                    try await pool.run {
                        let before = cvipsshim_small_jpeg_rendered()
                        let tiers = try renderer.render(bytes).tiers.map(\.bytes)
                        return (index, tiers, cvipsshim_small_jpeg_rendered() - before)
                    }
                }
            }
            for try await (index, tiers, taken) in group {
                #expect(taken == 1, "\(names[index]) went the general way")
                #expect(tiers == expected[index], "\(names[index])")
            }
        }
    }

    @Test func theGeneralPathEncodesATierEqualToTheOneBeforeOnce() throws {
        // 96 × 64: smaller than both tiers, one square for both, encoded once.
        let avatar = try general.render(try Fixtures.photo("chelsea-96.jpg"))
        #expect(avatar.tiers.map(\.side) == [64, 64])
        #expect(avatar.tiers[0].bytes == avatar.tiers[1].bytes)
        let resized = try general.render(try Self.account("account-331.jpg"))
        #expect(resized.tiers.map(\.side) == [330, 331])
    }
}
