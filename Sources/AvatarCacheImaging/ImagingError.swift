import AvatarCacheSupport
/// Why an image could not be turned into cache files.
public enum ImagingError: Error, Equatable, CustomStringConvertible, Sendable {
    /// The bytes are not one of the formats we decode (JPEG, PNG, WebP, GIF, HEIC/AVIF).
    case unsupportedFormat(String)
    /// The header declares more pixels than the limit allows; nothing was decoded.
    case tooManyPixels(width: Int, height: Int, limit: Int)
    /// The data is truncated or corrupt.
    case invalidImage(String)
    /// libvips itself failed (set-up, encoding).
    case library(String)

    public var description: String {
        switch self {
        case .unsupportedFormat(let what): return "unsupported format: \(what)"
        case let .tooManyPixels(width, height, limit):
            return "too many pixels: \(width)×\(height) = \(width * height) > limit \(limit)"
        case .invalidImage(let why): return "invalid image: \(why)"
        case .library(let why): return "libvips: \(why)"
        }
    }
}

extension SourceFailure {
    /// The class of a source whose image could not be used.
    package init(_ error: ImagingError) {
        switch error {
        case .unsupportedFormat: self.init(.unsupportedFormat, error.description)
        case .tooManyPixels: self.init(.tooManyPixels, error.description)
        case .invalidImage, .library: self.init(.invalidImage, error.description)
        }
    }
}
