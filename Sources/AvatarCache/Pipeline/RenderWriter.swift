import Foundation

/// Renders a photo and writes its tier files; runs on a decode pool thread, so the
/// blocking file writes stay off the cooperative pool too.
struct RenderWriter: Sendable {
    let renderer: AvatarRenderer
    let monograms: MonogramRenderer
    let directory: CacheDirectory

    func renderPhoto(_ bytes: [UInt8], contentSHA256: String) throws -> RenderedFiles {
        let avatar: RenderedAvatar
        do {
            avatar = try renderer.render(bytes)
        } catch let error as ImagingError {
            throw SourceFailure(error)
        }
        let files = try write(avatar.tiers, contentSHA256: contentSHA256, format: renderer.outputFormat)
        return RenderedFiles(format: avatar.format, sourceWidth: avatar.sourceWidth, sourceHeight: avatar.sourceHeight, files: files, renderedNow: true)
    }

    func renderMonogram(_ spec: MonogramSpec, contentSHA256: String) throws -> RenderedFiles {
        let tiers: [RenderedTier]
        do {
            tiers = try monograms.render(spec)
        } catch let error as ImagingError {
            throw SourceFailure(error)
        }
        let files = try write(tiers, contentSHA256: contentSHA256, format: monograms.outputFormat)
        return RenderedFiles(format: nil, sourceWidth: nil, sourceHeight: nil, files: files, renderedNow: true)
    }

    /// Writes each tier; takes tiers smallest first.
    private func write(_ tiers: [RenderedTier], contentSHA256: String, format: OutputFormat) throws -> [String: CacheFile] {
        var files: [String: CacheFile] = [:]
        var larger: CacheFile?
        for tier in tiers.reversed() {
            // A source smaller than a tier is not upscaled, so two tiers can come out
            // the same: the smaller one then shares the larger one's file.
            if let larger, larger.width == tier.side {
                files[String(tier.tier)] = larger
                continue
            }
            let name = CacheDirectory.fileName(contentSHA256: contentSHA256, tier: tier.tier, format: format)
            try directory.writeAtomically(tier.bytes, to: name)
            let file = CacheFile(filename: name, width: tier.side, height: tier.side, fileSize: Int64(tier.bytes.count),
                                 sha256: SHA256Hex.of(tier.bytes))
            files[String(tier.tier)] = file
            larger = file
        }
        return files
    }
}
