import ArgumentParser
import CLISupport
import FoundationEssentials
import Glibc
import VaultCore
import VaultFiles
import VaultImaging
import VaultPaper

/// A PDF given to `scan`, `verify`, `combine` or `code` may come from someone else (a share
/// sheet), and poppler's work on a hostile one (nested forms, huge streams) is not bounded by
/// its size. So it is read in a child process of this tool, limited to
/// ``cpuSeconds`` of processing and ``memoryBytes`` of memory, which gets the PDF on standard
/// input and gives back the page's pixels; the key a sheet holds is decoded here, as for a photo.
enum IsolatedPDF {
    static let cpuSeconds: rlim_t = 5
    /// Its time on the clock: a reader stopped (SIGSTOP) or waiting would use no processor time.
    static let wallSeconds = 30.0
    static let memoryBytes: rlim_t = 4 << 30
    /// The most of the child's output kept: its size line and a page's pixels at most.
    static let outputBytes = 32 + InputLimits.imagePixels
    /// The most of its standard error kept: a refusal is a code and a 200-character reason.
    static let errorBytes = 4096
    /// The child's whole environment (issue 37). Nothing of the caller's: G_MESSAGES_DEBUG
    /// makes GLib print poppler's messages to standard output, into the pixels, and other
    /// variables (GLib's, fontconfig's, a debugger's) change what the child reads or does.
    /// Sheets embed their fonts; fontconfig's system configuration is enough for the rest.
    static let environment = ["PATH": "/usr/bin:/bin", "LANG": "C"]

    /// The page as a picture; nil when `bytes` are not a PDF (a photo or a scan).
    static func picture(of bytes: [UInt8], name: String) throws -> GrayImage? {
        guard SheetPDF.isPDF(bytes) else { return nil }
        // The child's libraries checked here first (issue 48): a missing poppler is exit 69
        // with its package named, not a refusal relayed from the child.
        try SheetPDF.requireReader()
        // This very program: /proc/self/exe resolved, as its argv[0].
        guard let resolved = realpath("/proc/self/exe", nil) else { throw VaultError.pdfReaderNotStarted(errno) }
        let program = String(cString: resolved)
        free(resolved)
        // Three pipes of its own: the child's output only ever reaches this process, never the
        // terminal, and it gets no other descriptor of the tool's. The PDF goes in while the
        // pixels come out: neither pipe may fill and stall the other.
        let child: ChildProcess
        do {
            // The child is told the file's name, so its refusals name the file as they are.
            child = try ChildProcess.run(program, arguments: [ReadPDF.configuration.commandName!, "--name=\(name)"], environment: environment, input: bytes,
                                         outputLimit: outputBytes, errorLimit: errorBytes, timeout: wallSeconds)
        } catch let error as ChildProcessStartError {
            throw VaultError.pdfReaderNotStarted(error.code)
        }
        guard case .exited(let status) = child.termination, child.output.count <= outputBytes else { throw VaultError.pdfTooCostly(name) }
        guard status == 0 else { throw ReadPDF.error(from: String(decoding: child.errors.prefix(2000), as: UTF8.self), name: name) }
        return try ReadPDF.picture(from: child.output, name: name)
    }
}

/// The child's side (not for people: hidden from help). Limits itself, reads a PDF on standard
/// input, and writes the page as `width height\n` and its gray pixels into the pipe it was
/// given; a refusal is the error's code and reason on standard error, exit 2.
struct ReadPDF: ParsableCommand {
    static let configuration = CommandConfiguration(commandName: "_read-pdf", abstract: "Read a PDF for this tool (internal).", shouldDisplay: false)

    @Option(help: "The PDF's name in a refusal.")
    var name = "the PDF"

    func run() throws {
        // A crash on a hostile PDF (its memory limit reached, a bug in poppler) leaves no core
        // file, which would hold the page, a key (issue 37): ToolMain made this process, as
        // every tool's, undumpable before it parsed its arguments (ProcessHardening).
        // The page goes only into the pipe of the tool that started it: run by hand at a
        // terminal, or into a file, it would show or leave a key.
        var status = stat()
        guard fstat(STDOUT_FILENO, &status) == 0, status.st_mode & S_IFMT == S_IFIFO else {
            throw VaultError.internalCommandRunByHand()
        }
        // The whole PDF is read first: a child that stopped early would leave the tool writing
        // into a pipe nobody reads (SIGPIPE). The limits then bound poppler's work alone.
        guard let bytes = try? BoundedRead.all(from: STDIN_FILENO, limit: InputLimits.imageFile, name: "-", what: "PDF") else { throw ExitCode(1) }
        var cpu = rlimit(rlim_cur: IsolatedPDF.cpuSeconds, rlim_max: IsolatedPDF.cpuSeconds + 1)
        var memory = rlimit(rlim_cur: IsolatedPDF.memoryBytes, rlim_max: IsolatedPDF.memoryBytes)
        guard setrlimit(__rlimit_resource_t(RLIMIT_CPU.rawValue), &cpu) == 0, setrlimit(__rlimit_resource_t(RLIMIT_AS.rawValue), &memory) == 0 else { throw ExitCode(1) }
        do {
            guard let image = try SheetPDF.picture(of: bytes, name: name) else { throw ExitCode(1) }
            try StandardStreams.writeOutput(Array("\(image.width) \(image.height)\n".utf8) + image.pixels)
        } catch let error as VaultError {
            StandardStreams.writeError(Array("\(error.code.name)\n\(error.reason)".utf8))
            throw ExitCode(2)
        }
    }

    /// The picture the child wrote: its size line, then exactly that many pixels.
    static func picture(from output: [UInt8], name: String) throws -> GrayImage {
        guard let newline = output.prefix(32).firstIndex(of: 0x0a) else { throw VaultError.pdfTooCostly(name) }
        let size = String(decoding: output[..<newline], as: UTF8.self).split(separator: " ").compactMap { Int($0) }
        guard size.count == 2, size[0] > 0, size[1] > 0, output.count - newline - 1 == size[0] * size[1] else { throw VaultError.pdfTooCostly(name) }
        var image = GrayImage(width: size[0], height: size[1], dotsPerInch: SheetPDF.readingDotsPerInch)
        image.pixels = Array(output[(newline + 1)...])
        return image
    }

    /// The child's refusal, as the error it was (it names the file itself).
    static func error(from message: String, name: String) -> VaultError {
        let lines = message.split(separator: "\n", maxSplits: 1)
        // A library the child could not load (its environment is not the tool's) is exit 69 as
        // in the tool, its reason naming the library and its package.
        let known: [VaultError.Code] = [.notOnePage, .malformedDocument, .tooLarge, .cryptoFailure, .libraryFailure, .libraryUnavailable, .libraryTooOld, .io]
        guard let first = lines.first, let code = known.first(where: { $0.name == first }) else { return VaultError.pdfTooCostly(name) }
        let reason = lines.count > 1 ? String(lines[1]) : "unreadable"
        return VaultError.pdfRefused(code, reason)
    }
}

extension VaultError {
    /// The child that reads a PDF could not be started (out of processes or memory).
    static func pdfReaderNotStarted(_ code: Int32, file: String = #fileID, line: UInt = #line) -> VaultError {
        VaultError(.io, "could not start the child process that reads a PDF: \(ErrnoText.of(code))", file: file, line: line)
    }

    /// The child reading a PDF ran out of its processing time or memory, or died.
    static func pdfTooCostly(_ name: String, file: String = #fileID, line: UInt = #line) -> VaultError {
        VaultError(.tooLarge, "'\(name)' took more than \(IsolatedPDF.cpuSeconds) s or \(IsolatedPDF.memoryBytes >> 30) GiB to draw; it is not a sheet as the suite prints it",
                   hint: "give a photo or a scan of the printed sheet instead", file: file, line: line)
    }

    /// The child's own refusal (a damaged PDF, several pages, a page too large), kept as it was.
    static func pdfRefused(_ code: VaultError.Code, _ reason: String, file: String = #fileID, line: UInt = #line) -> VaultError {
        // The tool loaded the same libraries before it started the child: one the child cannot
        // load is found only through the tool's own environment (LD_LIBRARY_PATH), which the
        // child does not get.
        let unavailable: Set<VaultError.Code> = [.libraryUnavailable, .libraryTooOld]
        return VaultError(code, reason, hint: unavailable.contains(code) ? "the PDF reader runs with a clean environment: install the package the message names where the system finds it" : nil,
                          file: file, line: line)
    }
}
