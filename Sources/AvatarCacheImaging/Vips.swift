import CVips
import CVipsShim
import Foundation

/// Process-wide libvips set-up, done once before the first image.
///
/// libvips' defaults suit one large image: an operation cache and a thread pool per
/// image. We process many small images, so the cache is off, each image runs on one
/// libvips thread (`concurrency 1`) and images run in parallel on our own threads
/// (`DecodeWorkerPool`). Every loader except the ones we need is blocked, so a hostile
/// file can never reach ImageMagick, poppler, librsvg or the other untrusted loaders.
public enum Vips {
    /// The loaders we accept; every other `VipsForeignLoad` subclass is blocked. TIFF's
    /// is reached only for photos an export carries inline (an address book's): the
    /// renderer refuses a downloaded TIFF before any loader sees it, since libtiff is a
    /// larger attack surface than the others and no photo service serves TIFF.
    static let allowedLoaders = [
        "VipsForeignLoadJpeg", "VipsForeignLoadPng", "VipsForeignLoadWebp",
        "VipsForeignLoadNsgif", "VipsForeignLoadHeif", "VipsForeignLoadTiff",
    ]

    private static let initialised: Result<Void, ImagingError> = {
        // libvips prints warnings (a truncated image's "error in tile") straight to
        // stderr; the same problems reach the report as errors, so keep logs clean.
        setenv("VIPS_WARNING", "0", 0)
        if vips_init("avatar-cache") != 0 {
            return .failure(.library("vips_init failed: \(takeErrorMessage())"))
        }
        vips_cache_set_max(0)
        vips_cache_set_max_mem(0)
        vips_cache_set_max_files(0)
        vips_concurrency_set(1)
        vips_block_untrusted_set(1)
        vips_operation_block_set("VipsForeignLoad", 1)
        for loader in allowedLoaders {
            vips_operation_block_set(loader, 0)
        }
        return .success(())
    }()

    /// Initialises libvips once; later calls return the first call's result.
    public static func initialise() throws {
        try initialised.get()
    }

    /// Caps glibc's malloc arenas for the whole process (call first thing in `main`).
    /// With libvips on several threads, per-thread arenas fragment and RSS keeps
    /// growing. One arena: every thread's freed decode buffers are there for the next
    /// decode, on any thread (two arenas raised the peak: docs/performance-notes.md,
    /// "System time: freed memory re-used").
    public static func limitMallocArenas(_ arenas: Int = 1) {
        _ = cvipsshim_set_malloc_arena_max(Int32(arenas))
    }

    /// Keeps freed memory in the heap for the next decode instead of giving it back to
    /// the system: allocations are mapped only from `mapFrom` up (fixing the threshold
    /// also stops glibc moving it), and up to `keep` bytes free at the top of the heap
    /// stay. Decode buffers (a progressive JPEG's coefficient planes, 12-24 MB each, a
    /// HEIC's planes, decoded squares) come and go with every photo: mapped fresh, each
    /// would be zeroed by the kernel page by page, which was most of a run's system time;
    /// re-used from the heap, they cost none of it. The heap then stays at its high-water
    /// mark, which the decode-memory budget (`--max-decode-memory`) allows for. Measured:
    /// docs/performance-notes.md, "System time: freed memory re-used".
    public static func reuseFreedMemory(mapFrom: Int = 128 << 20, keep: Int = 64 << 20) {
        _ = cvipsshim_set_mmap_threshold(Int32(mapFrom))
        _ = cvipsshim_set_trim_threshold(Int32(keep))
    }

    /// Gives the heap's free memory back to the system now: between the photo stage,
    /// whose decode buffers it kept for re-use (`reuseFreedMemory`), and the monogram
    /// stage, which needs none of them but loads fonts on top.
    public static func returnFreedMemory() {
        _ = cvipsshim_malloc_trim()
    }

    /// Reads and clears libvips' error buffer.
    package static func takeErrorMessage() -> String {
        let message = String(cString: vips_error_buffer())
            .trimmingCharacters(in: .whitespacesAndNewlines)
            .replacingOccurrences(of: "\n", with: "; ")
        vips_error_clear()
        return message.isEmpty ? "unknown libvips error" : message
    }
}

/// Owns one `VipsImage` reference and releases it in `deinit`.
package final class VipsImageRef {
    package let pointer: UnsafeMutablePointer<VipsImage>

    package init(_ pointer: UnsafeMutablePointer<VipsImage>) {
        self.pointer = pointer
    }

    deinit {
        g_object_unref(gpointer(pointer))
    }

    package var width: Int { Int(vips_image_get_width(pointer)) }
    package var height: Int { Int(vips_image_get_height(pointer)) }
    package var bands: Int { Int(vips_image_get_bands(pointer)) }
    var hasAlpha: Bool { vips_image_hasalpha(pointer) != 0 }
    var interpretation: VipsInterpretation { vips_image_get_interpretation(pointer) }
    var hasICCProfile: Bool { vips_image_get_typeof(pointer, "icc-profile-data") != 0 }
    var isUnsignedChar: Bool { vips_image_get_format(pointer) == VIPS_FORMAT_UCHAR }
    /// Pixels already in memory (decoded, rendered): reading them computes nothing.
    var isInMemory: Bool { cvipsshim_is_in_memory(pointer) != 0 }

    /// Runs one libvips operation that writes a new image to its out-parameter.
    package static func make(
        _ what: String,
        _ body: (UnsafeMutablePointer<UnsafeMutablePointer<VipsImage>?>) -> cvipsshim_status
    ) throws -> VipsImageRef {
        var out: UnsafeMutablePointer<VipsImage>?
        let status = body(&out)
        guard status == CVIPSSHIM_OK, let out else {
            if let out { g_object_unref(gpointer(out)) }
            throw ImagingError.library("\(what): \(Vips.takeErrorMessage())")
        }
        return VipsImageRef(out)
    }

    package func apply(
        _ what: String,
        _ body: (UnsafeMutablePointer<VipsImage>, UnsafeMutablePointer<UnsafeMutablePointer<VipsImage>?>) -> cvipsshim_status
    ) throws -> VipsImageRef {
        try VipsImageRef.make(what) { body(pointer, $0) }
    }

    /// Renders the whole image into memory on this thread, so later operations read it
    /// more than once without decoding again. Of the header, only the interpretation,
    /// resolution and ICC profile are kept.
    package func copiedToMemory() throws -> VipsImageRef {
        var out: UnsafeMutablePointer<VipsImage>?
        var status = cvipsshim_render_here(pointer, &out)
        if status == CVIPSSHIM_NOT_APPLICABLE { status = cvipsshim_copy_memory(pointer, &out) }
        guard status == CVIPSSHIM_OK, let out else {
            throw ImagingError.library("decode: \(Vips.takeErrorMessage())")
        }
        return VipsImageRef(out)
    }

    /// Encodes through one of the shim's savers and returns the bytes.
    func encode(
        _ what: String,
        _ body: (UnsafeMutablePointer<VipsImage>, UnsafeMutablePointer<UnsafeMutableRawPointer?>, UnsafeMutablePointer<Int>) -> cvipsshim_status
    ) throws -> [UInt8] {
        guard let bytes = try encodeIfTaken(what, body) else {
            throw ImagingError.library("\(what): not applicable")
        }
        return bytes
    }

    /// The same through a fast path: nil when it does not take the image
    /// (`CVIPSSHIM_NOT_APPLICABLE`).
    func encodeIfTaken(
        _ what: String,
        _ body: (UnsafeMutablePointer<VipsImage>, UnsafeMutablePointer<UnsafeMutableRawPointer?>, UnsafeMutablePointer<Int>) -> cvipsshim_status
    ) throws -> [UInt8]? {
        var buffer: UnsafeMutableRawPointer?
        var length = 0
        let status = body(pointer, &buffer, &length)
        defer { if let buffer { g_free(buffer) } }
        if status == CVIPSSHIM_NOT_APPLICABLE { return nil }
        guard status == CVIPSSHIM_OK, let buffer else {
            throw ImagingError.library("\(what): \(Vips.takeErrorMessage())")
        }
        return Array(UnsafeRawBufferPointer(start: buffer, count: length))
    }
}
