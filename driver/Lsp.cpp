#include "Lsp.h"
#include "LspReader.h"
#include "ReportReader.h"
#include "Cache.h"
#include "Emit.h"
#include "Inputs.h"
#include "Interrupt.h"
#include "Options.h"
#include "OutputFile.h"
#include "WorkerProcess.h"

#include "utils/ProjectIndex.h"

#include "llvm/ADT/StringExtras.h"
#include "llvm/Support/ConvertUTF.h"
#include "llvm/Support/FileSystem.h"
#include "llvm/Support/MemoryBuffer.h"
#include "llvm/Support/Path.h"
#include "llvm/Support/raw_ostream.h"

#include <limits>
#include <nlohmann/json.hpp>

#include <chrono>
#include <condition_variable>
#include <csignal>
#include <deque>
#include <cerrno>
#include <unistd.h>
#include <map>
#include <mutex>
#include <set>
#include <sys/resource.h>
#include <thread>

using namespace llvm;
using nlohmann::json;

namespace torchtidy::driver {

namespace {

enum ErrorCode {
  ParseError = -32700,
  InvalidRequest = -32600,
  MethodNotFound = -32601,
  InvalidParams = -32602,
  ServerNotInitialized = -32002,
};
enum MessageType { ErrorMessage = 1, WarningMessage = 2, InfoMessage = 3 };
enum Severity { SeverityError = 1, SeverityWarning = 2 };

/// An LSP line number (a uinteger); anything else, a double included (converting one out of
/// range would be undefined), is the client's error, answered with InvalidParams.
unsigned lineNumber(const json &J) {
  if (!J.is_number_unsigned() || J.get<uint64_t>() > std::numeric_limits<unsigned>::max())
    throw json::type_error::create(302, "a line must be an integer from 0", &J);
  return J.get<unsigned>();
}

/// The path of a file: URI (percent-decoded); empty for any other scheme.
std::string pathFromUri(StringRef Uri) {
  if (!Uri.consume_front("file://"))
    return "";
  std::string Path;
  for (size_t I = 0; I < Uri.size(); ++I) {
    unsigned Byte;
    if (Uri[I] == '%' && I + 2 < Uri.size() && !Uri.substr(I + 1, 2).getAsInteger(16, Byte)) {
      Path += char(Byte);
      I += 2;
    } else {
      Path += Uri[I];
    }
  }
  return Path;
}

std::string uriFromPath(StringRef Path) {
  std::string Uri = "file://";
  for (unsigned char C : Path) {
    if (isAlnum(C) || StringRef("-._~/").contains(C))
      Uri += C;
    else
      Uri += "%" + utohexstr(C, /*LowerCase=*/false, /*Width=*/2);
  }
  return Uri;
}

/// LSP positions count UTF-16 code units from 0; torchtidy's columns count bytes from 1.
/// Columns on lines of \p Text (the analyzed buffer) are converted; elsewhere (a header)
/// bytes are taken as they are, exact for ASCII lines.
class Positions {
public:
  explicit Positions(StringRef Text) {
    for (StringRef Rest = Text; !Rest.empty();) {
      auto [Line, Tail] = Rest.split('\n');
      Lines.push_back(Line);
      Rest = Tail;
    }
  }

  json position(unsigned Line, unsigned ByteColumn, bool InText) const {
    Line = std::max(Line, 1u);
    ByteColumn = std::max(ByteColumn, 1u);
    unsigned Character = ByteColumn - 1;
    if (InText && Line >= 1 && Line <= Lines.size()) {
      StringRef Prefix = Lines[Line - 1].take_front(ByteColumn - 1);
      Character = 0;
      for (size_t I = 0; I < Prefix.size();) {
        unsigned Length = getNumBytesForUTF8(Prefix[I]);
        // A code point outside the BMP is two UTF-16 units; an invalid byte counts as one.
        Character += Length == 4 ? 2 : 1;
        I += Length ? Length : 1;
      }
    }
    return {{"line", Line - 1}, {"character", Character}};
  }

  json range(const Span &S, bool InText) const {
    bool Extent = S.EndLine > S.Line || (S.EndLine == S.Line && S.EndColumn > S.Column);
    return {{"start", position(S.Line, S.Column, InText)},
            {"end", Extent ? position(S.EndLine, S.EndColumn, InText)
                           : position(S.Line, S.Column, InText)}};
  }

private:
  std::vector<StringRef> Lines;
};

struct Document {
  std::string Text;
  int64_t Version = 0;
  /// An analysis of it has completed: its preamble exists, so later ones are fast and may
  /// be cancelled (cancelling the first would throw away a half-built preamble).
  bool Warm = false;
  /// The user was told why it cannot be analyzed (told once, not on every edit).
  bool Told = false;
  /// The fix-its of the last published diagnostics, as code actions.
  std::vector<json> Actions;
  /// What the checks of its last analysis asked the project index, and the answers' hashes:
  /// when the index answers differently, the document is analyzed again.
  std::map<std::string, uint64_t> Consulted;
};

/// The analysis in progress (one at a time: each already uses a whole core).
struct Running {
  std::string Uri;
  int64_t Version = 0;
  sys::procid_t Pid = 0;
  bool Cancelled = false;
  /// The result is in: its diagnostics are being, or have been, published.
  bool Done = false;
  /// $/progress of a cold analysis: the token, and whether the client accepted it.
  std::string Token;
  bool ProgressBegun = false;
  /// A translation unit summarized for the project index in the background (Uri empty):
  /// any document to analyze stops it (it is summarized again later).
  bool Indexing = false;
};

class Server {
public:
  Server(std::string Self, std::vector<const char *> WorkerArgs)
      : Self(std::move(Self)), WorkerArgs(std::move(WorkerArgs)), Cache(ResultCache::open()) {}

  int run() {
    if (std::error_code EC = createTemporaryDirectory("torchtidy-lsp", TmpDir)) {
      errs() << "torchtidy: error: cannot create a temporary directory: " << EC.message() << "\n";
      return 1;
    }
    handleInterrupts(1);
    removeOnInterrupt(TmpDir);
    std::thread Analyzer([this] { analyzeLoop(); });
    int Status = readLoop();
    {
      std::lock_guard<std::mutex> G(Lock);
      Stopping = true;
      cancelLocked("");
    }
    Wake.notify_all();
    Analyzer.join();
    sys::fs::remove_directories(TmpDir);
    forgetTemporary(TmpDir);
    return Status;
  }

private:
  void send(const json &Message) {
    // Messages may quote source text that is not valid UTF-8.
    std::string Body = Message.dump(-1, ' ', false, json::error_handler_t::replace);
    std::lock_guard<std::mutex> G(OutLock);
    outs() << "Content-Length: " << Body.size() << "\r\n\r\n" << Body;
    outs().flush();
  }
  void reply(const json &Id, json Result) {
    send({{"jsonrpc", "2.0"}, {"id", Id}, {"result", std::move(Result)}});
  }
  void replyError(const json &Id, int Code, const std::string &Message) {
    send({{"jsonrpc", "2.0"}, {"id", Id}, {"error", {{"code", Code}, {"message", Message}}}});
  }
  void notify(StringRef Method, json Params) {
    send({{"jsonrpc", "2.0"}, {"method", Method}, {"params", std::move(Params)}});
  }
  void show(MessageType Type, const std::string &Message) {
    notify("window/showMessage", {{"type", Type}, {"message", "torchtidy: " + Message}});
  }
  void log(MessageType Type, const std::string &Message) {
    notify("window/logMessage", {{"type", Type}, {"message", "torchtidy: " + Message}});
  }

  /// Reads framed messages until `exit` or the end of input; returns the exit status.
  int readLoop() {
    LspReader Reader([](char *Into, size_t N) -> size_t {
      while (true) {
        ssize_t Got = ::read(0, Into, N);
        if (Got < 0 && errno == EINTR)
          continue;
        return Got < 0 ? 0 : size_t(Got);
      }
    });
    while (true) {
      LspReader::Frame F = Reader.next();
      if (F.K == LspReader::Kind::End)
        return 1; // the client went away without `exit`
      if (F.K == LspReader::Kind::Bad) {
        replyError(nullptr, InvalidRequest, F.Problem);
        continue;
      }
      // Bounded depth: a deeply nested message is an error, not a stack overflow.
      Expected<json> Parsed = parseJson(F.Body, "the message");
      if (!Parsed) {
        Reader.resync(F.Body);
        replyError(nullptr, ParseError, toString(Parsed.takeError()));
        continue;
      }
      json Message = std::move(*Parsed);
      if (!Message.is_object()) {
        replyError(nullptr, InvalidRequest, "the message is not a JSON-RPC object");
        continue;
      }
      json Id = Message.contains("id") ? Message["id"] : json();
      try {
        if (std::optional<int> Exit = handle(Message, Id))
          return *Exit;
      } catch (const json::exception &E) {
        std::string Why = std::string("invalid params: ") + E.what();
        if (!Id.is_null())
          replyError(Id, InvalidParams, Why);
        else
          log(ErrorMessage, Why);
      }
    }
  }

  std::optional<int> handle(const json &M, const json &Id) {
    if (!M.contains("method")) {
      onResponse(Id);
      return std::nullopt;
    }
    std::string Method = M.at("method").get<std::string>();
    const json &Params = M.contains("params") ? M["params"] : json::object();
    if (Method == "exit")
      return ShutDown ? 0 : 1;
    if (ShutDown) {
      // After `shutdown` only `exit` is served; a request gets the error the protocol names.
      if (!Id.is_null())
        replyError(Id, InvalidRequest, "the server is shutting down");
      return std::nullopt;
    }
    if (!Initialized && Method != "initialize") {
      if (!Id.is_null())
        replyError(Id, ServerNotInitialized, "'initialize' first");
      return std::nullopt;
    }
    if (Method == "initialize") {
      initialize(Params);
      reply(Id, {{"capabilities",
                  {{"textDocumentSync",
                    {{"openClose", true}, {"change", 1}, {"save", {{"includeText", false}}}}},
                   {"codeActionProvider", {{"codeActionKinds", json::array({"quickfix"})}}}}},
                 {"serverInfo", {{"name", "torchtidy"}, {"version", TORCHTIDY_VERSION}}}});
    } else if (Method == "shutdown") {
      {
        std::lock_guard<std::mutex> G(Lock);
        ShutDown = true;
        Docs.clear();
        Queue.clear();
        IndexTodo.clear();
        cancelLocked("");
      }
      reply(Id, nullptr);
    } else if (Method == "textDocument/didOpen" || Method == "textDocument/didChange") {
      const json &Doc = Params.at("textDocument");
      std::string Uri = Doc.at("uri").get<std::string>();
      // Full synchronization (change = 1): the last change holds the whole text.
      std::string Text;
      if (Method == "textDocument/didOpen") {
        Text = Doc.at("text").get<std::string>();
      } else {
        const json &Changes = Params.at("contentChanges");
        if (!Changes.is_array() || Changes.empty())
          throw json::other_error::create(501, "contentChanges must be a non-empty array",
                                          &Changes);
        Text = Changes.back().at("text").get<std::string>();
      }
      std::lock_guard<std::mutex> G(Lock);
      if (Method == "textDocument/didChange" && !Docs.count(Uri))
        return std::nullopt; // not open: a client error, nothing to analyze
      Document &D = Docs[Uri];
      D.Text = std::move(Text);
      D.Version = Doc.value("version", D.Version + 1);
      cancelLocked(Uri);
      enqueueLocked(Uri);
    } else if (Method == "textDocument/didSave") {
      std::string Uri = Params.at("textDocument").at("uri").get<std::string>();
      std::lock_guard<std::mutex> G(Lock);
      auto Saved = Docs.find(Uri);
      if (Saved == Docs.end())
        return std::nullopt;
      // The buffer is analyzed, not the file: a save of the text whose analysis is queued
      // or running needs no second one (a save of a published version re-analyzes it).
      bool Pending = std::find(Queue.begin(), Queue.end(), Uri) != Queue.end() ||
                     (Current.Uri == Uri && Current.Version == Saved->second.Version && !Current.Cancelled &&
                      !Current.Done);
      if (!Pending)
        enqueueLocked(Uri);
      // The other open files may include the saved one.
      for (const auto &[Other, D] : Docs)
        if (Other != Uri)
          enqueueLocked(Other);
    } else if (Method == "textDocument/didClose") {
      std::string Uri = Params.at("textDocument").at("uri").get<std::string>();
      {
        std::lock_guard<std::mutex> G(Lock);
        Docs.erase(Uri);
        cancelLocked(Uri);
      }
      notify("textDocument/publishDiagnostics", {{"uri", Uri}, {"diagnostics", json::array()}});
    } else if (Method == "textDocument/codeAction") {
      std::string Uri = Params.at("textDocument").at("uri").get<std::string>();
      unsigned From = lineNumber(Params.at("range").at("start").at("line"));
      unsigned To = lineNumber(Params.at("range").at("end").at("line"));
      json Actions = json::array();
      {
        std::lock_guard<std::mutex> G(Lock);
        if (auto It = Docs.find(Uri); It != Docs.end())
          for (const json &A : It->second.Actions) {
            const json &R = A["diagnostics"][0]["range"];
            if (R["start"]["line"].get<unsigned>() <= To && R["end"]["line"].get<unsigned>() >= From)
              Actions.push_back(A);
          }
      }
      reply(Id, std::move(Actions));
    } else if (!Id.is_null()) {
      replyError(Id, MethodNotFound, "unsupported method '" + Method + "'");
    }
    // Unknown notifications ($/cancelRequest, initialized, ...) need no answer.
    return std::nullopt;
  }

  void initialize(const json &Params) {
    Initialized = true;
    const json &Init = Params.contains("initializationOptions") ? Params["initializationOptions"]
                                                                : json::object();
    if (Init.is_object() && Init.contains("compilationDatabasePath"))
      BuildPath = Init["compilationDatabasePath"].get<std::string>();
    std::lock_guard<std::mutex> G(Lock);
    if (Params.contains("capabilities") && Params["capabilities"].contains("window"))
      ProgressSupported = Params["capabilities"]["window"].value("workDoneProgress", false);
  }

  /// A reply to one of our requests: only window/workDoneProgress/create expects one.
  void onResponse(const json &Id) {
    std::lock_guard<std::mutex> G(Lock);
    if (!Id.is_string() || Id.get<std::string>() != Current.Token || Current.ProgressBegun)
      return;
    Current.ProgressBegun = true;
    notify("$/progress",
           {{"token", Current.Token},
            {"value",
             {{"kind", "begin"},
              {"title", "torchtidy"},
              {"message", sys::path::filename(pathFromUri(Current.Uri)).str() +
                              ": first analysis (builds the LibTorch preamble)"}}}});
  }

  void enqueueLocked(const std::string &Uri) {
    if (std::find(Queue.begin(), Queue.end(), Uri) == Queue.end())
      Queue.push_back(Uri);
    // The editor first: a background summary gives way, and is made again when idle.
    if (Current.Indexing) {
      Current.Cancelled = true;
      if (Current.Pid > 0)
        ::kill(Current.Pid, SIGKILL);
    }
    Wake.notify_all();
  }

  /// Stops the analysis of \p Uri (of any document when empty) that a newer version made
  /// stale, unless it is a document's first: that one builds the preamble every later
  /// analysis needs, and its result is simply dropped.
  void cancelLocked(const std::string &Uri) {
    if (Current.Indexing && Uri.empty()) {
      Current.Cancelled = true;
      if (Current.Pid > 0)
        ::kill(Current.Pid, SIGKILL);
      return;
    }
    if (Current.Uri.empty() || (!Uri.empty() && Uri != Current.Uri))
      return;
    auto It = Docs.find(Current.Uri);
    if (!Stopping && !ShutDown && It != Docs.end() && !It->second.Warm)
      return;
    Current.Cancelled = true;
    if (Current.Pid > 0)
      ::kill(Current.Pid, SIGKILL);
  }

  void analyzeLoop() {
    while (true) {
      std::string Uri, Text;
      int64_t Version;
      bool Cold;
      {
        std::unique_lock<std::mutex> G(Lock);
        Wake.wait(G, [this] { return Stopping || !Queue.empty() || (!IndexTodo.empty() && !ShutDown); });
        if (Stopping)
          return;
        if (Queue.empty()) {
          Job J = std::move(IndexTodo.front());
          IndexTodo.pop_front();
          Current = Running();
          Current.Indexing = true;
          G.unlock();
          summarize(std::move(J));
          G.lock();
          Current = Running();
          continue;
        }
        Uri = Queue.front();
        Queue.pop_front();
        auto It = Docs.find(Uri);
        if (It == Docs.end())
          continue;
        Text = It->second.Text;
        Version = It->second.Version;
        Cold = !It->second.Warm;
        Current = Running();
        Current.Uri = Uri;
        Current.Version = Version;
        if (Cold && ProgressSupported) {
          Current.Token = "torchtidy/" + std::to_string(++Requests);
          send({{"jsonrpc", "2.0"},
                {"id", Current.Token},
                {"method", "window/workDoneProgress/create"},
                {"params", {{"token", Current.Token}}}});
        }
      }
      analyze(Uri, Text, Version);
      std::lock_guard<std::mutex> G(Lock);
      if (Current.ProgressBegun)
        notify("$/progress", {{"token", Current.Token}, {"value", {{"kind", "end"}}}});
      Current = Running();
    }
  }

  /// Tells the user once per document why it is not analyzed; clears its diagnostics.
  void cannotAnalyze(const std::string &Uri, int64_t Version, const std::string &Why) {
    bool Tell;
    {
      std::lock_guard<std::mutex> G(Lock);
      auto It = Docs.find(Uri);
      Tell = It != Docs.end() && !It->second.Told;
      if (Tell)
        It->second.Told = true;
    }
    if (Tell)
      show(WarningMessage, Why);
    else
      log(WarningMessage, Why);
    publish(Uri, Version, json::array(), {});
  }

  void analyze(const std::string &Uri, const std::string &Text, int64_t Version) {
    std::string Path = pathFromUri(Uri);
    if (Path.empty())
      return cannotAnalyze(Uri, Version, Uri + ": not a file");
    Expected<Plan> P = planFiles({Path});
    if (!P)
      return cannotAnalyze(Uri, Version, toString(P.takeError()));
    if (P->Jobs.empty())
      return cannotAnalyze(Uri, Version,
                           P->Problems.empty() ? Path + ": nothing to analyze"
                                               : P->Problems.front().File + ": " +
                                                     P->Problems.front().Message);
    std::set<std::string> New;
    for (const std::string &D : P->Dropped)
      if (SaidDropped.insert(D).second)
        New.insert(D);
    if (!New.empty())
      log(WarningMessage,
          "compile options ignored (they do more than change how a file is parsed): " +
              droppedList(New));
    Job J = std::move(P->Jobs.front());
    std::shared_ptr<const ProjectIndex> Index;
    {
      std::lock_guard<std::mutex> G(Lock);
      Index = CurrentIndex;
      J.IndexFile = IndexPath;
    }
    queueIndexWork(*P);
    // A header is analyzed through a translation unit that includes it.
    std::string Analyzed = J.Header.empty() ? J.File : J.Header;
    std::string Base = (TmpDir + "/" + Twine(++Analyses)).str();

    // The buffer as saved: the result cache may replay it, and the worker reads the file.
    ErrorOr<std::unique_ptr<MemoryBuffer>> OnDisk = MemoryBuffer::getFile(Analyzed);
    bool Unsaved = !OnDisk || (*OnDisk)->getBuffer() != Text;
    if (Unsaved) {
      J.Overlay = Base + ".buffer";
      std::error_code EC;
      raw_fd_ostream(J.Overlay, EC) << Text;
      if (EC)
        return show(ErrorMessage, "cannot write " + J.Overlay + ": " + EC.message());
    }
    std::string Key = Cache && !Unsaved ? Cache->key(J) : "";
    std::optional<JobResult> Hit = Key.empty() ? std::nullopt : Cache->lookup(Key);
    // A result made with other answers from the project index is made again with this one.
    if (Hit && Index && llvm::any_of(Hit->Consulted, [&](const auto &C) {
          return Index->answerHash(C.first) != C.second;
        }))
      Hit.reset();
    WorkerOutcome O;
    if (Hit) {
      O.Result = std::move(*Hit);
    } else {
      auto Started = std::chrono::system_clock::now();
      O = runInWorker(J, Self, WorkerArgs, Base, [this](sys::procid_t Pid) {
        std::lock_guard<std::mutex> G(Lock);
        Current.Pid = Pid;
        setWorker(0, Pid);
        if (Pid > 0 && Current.Cancelled)
          ::kill(Pid, SIGKILL);
      });
      forgetWorker();
      if (!Key.empty() && !O.Internal)
        Cache->store(Key, O.Result, Started);
    }
    if (Unsaved)
      sys::fs::remove(J.Overlay);
    {
      std::lock_guard<std::mutex> G(Lock);
      auto It = Docs.find(Uri);
      // Cancelled (the document closed, reopened, edited) or superseded: whatever follows
      // is queued. A worker killed by the cancellation is no failure to show.
      if (It == Docs.end() || It->second.Version != Version || Current.Cancelled)
        return;
      It->second.Warm = !O.Internal;
      It->second.Consulted = O.Result.Consulted;
      Current.Done = true;
    }
    // What a saved file defines joins the project index (its own, unsaved edits do not).
    if (!Unsaved && !O.Internal && J.Header.empty())
      addSummaries(J.File, O.Result.Summaries);
    if (O.Internal) {
      show(ErrorMessage, Analyzed + ": " + O.Result.Problem);
      return publish(Uri, Version, json::array(), {});
    }
    if (!O.Result.Problem.empty())
      log(InfoMessage, Analyzed + ": " + O.Result.Problem);
    publishFindings(Uri, Version, Analyzed, Text, O.Result);
  }

  /// The worker of the current job has exited: its process ID may be reused, so nothing may
  /// signal it any more (publishIndex enqueues documents while a summary job is current).
  void forgetWorker() {
    std::lock_guard<std::mutex> G(Lock);
    Current.Pid = 0;
    setWorker(0, 0);
  }

  /// The first analysis in a compilation database queues its other translation units, to be
  /// summarized for the project index when the server is idle.
  void queueIndexWork(Plan &P) {
    if (P.Database.empty() || !IndexedDatabases.insert(P.Database).second || P.IndexOnly.empty())
      return;
    std::lock_guard<std::mutex> G(Lock);
    IndexTotal += P.IndexOnly.size();
    for (Job &J : P.IndexOnly)
      IndexTodo.push_back(std::move(J));
    log(InfoMessage, "project index: " + std::to_string(P.IndexOnly.size()) +
                         " other translation unit(s) of " + P.Database +
                         " to summarize in the background");
  }

  /// Summarizes one translation unit of the project index: the result cache's, else a
  /// worker's at low priority, kept in the cache like any analysis.
  void summarize(Job J) {
    std::string Key = Cache ? Cache->key(J) : "";
    std::optional<JobResult> Hit = Key.empty() ? std::nullopt : Cache->peek(Key);
    WorkerOutcome O;
    if (Hit) {
      O.Result = std::move(*Hit);
    } else {
      auto Started = std::chrono::system_clock::now();
      std::string Base = (TmpDir + "/index-" + Twine(++Analyses)).str();
      O = runInWorker(J, Self, WorkerArgs, Base, [this](sys::procid_t Pid) {
        std::lock_guard<std::mutex> G(Lock);
        Current.Pid = Pid;
        setWorker(0, Pid);
        if (Pid > 0) {
          ::setpriority(PRIO_PROCESS, Pid, 10);
          if (Current.Cancelled)
            ::kill(Pid, SIGKILL);
        }
      });
      forgetWorker();
      bool Cancelled;
      {
        std::lock_guard<std::mutex> G(Lock);
        Cancelled = Current.Cancelled;
        if (Cancelled && !Stopping && !ShutDown)
          IndexTodo.push_front(J); // given way to an edit: again when idle
      }
      if (Cancelled)
        return;
      if (!Key.empty() && !O.Internal)
        Cache->store(Key, O.Result, Started);
    }
    if (O.Internal)
      log(WarningMessage, "project index: " + J.File + " not summarized: " + O.Result.Problem);
    size_t Done;
    {
      std::lock_guard<std::mutex> G(Lock);
      Done = IndexTotal - IndexTodo.size();
    }
    if (!O.Internal)
      addSummaries(J.File, O.Result.Summaries, /*Publish=*/false);
    if (Done == IndexTotal || Done % 16 == 0)
      publishIndex(Done);
  }

  /// Records the summaries of translation unit \p File; with \p Publish, makes the new
  /// project index current when they changed.
  void addSummaries(const std::string &File, const std::string &Summaries, bool Publish = true) {
    Expected<ProjectIndex> I = Summaries.empty() ? ProjectIndex() : ProjectIndex::fromJSON(Summaries);
    if (!I) {
      log(WarningMessage, "project index: " + File + ": " + toString(I.takeError()));
      return;
    }
    auto [It, New] = TuSummaries.try_emplace(File, Summaries);
    if (!New && It->second == Summaries)
      return;
    It->second = Summaries;
    TuIndex.erase(File);
    TuIndex.emplace(File, std::move(*I));
    IndexDirty = true;
    if (!Publish)
      return;
    {
      std::lock_guard<std::mutex> G(Lock);
      if (!IndexTodo.empty())
        return; // published when the background work ends
    }
    publishIndex(0);
  }

  /// Writes the merged project index for the workers, and queues every open document whose
  /// last analysis got other answers from the index than this one gives.
  void publishIndex(size_t Summarized) {
    if (!IndexDirty)
      return;
    IndexDirty = false;
    auto Merged = std::make_shared<ProjectIndex>();
    for (const auto &[File, I] : TuIndex)
      Merged->merge(I);
    std::string Path = (TmpDir + "/index-" + Twine(++IndexVersion) + ".json").str();
    if (Error E = Merged->save(Path)) {
      log(WarningMessage, "project index: " + toString(std::move(E)));
      return;
    }
    std::string Old;
    {
      std::lock_guard<std::mutex> G(Lock);
      Old = IndexPath;
      IndexPath = Path;
      CurrentIndex = Merged;
      for (auto &[Uri, D] : Docs)
        if (llvm::any_of(D.Consulted,
                         [&](const auto &C) { return Merged->answerHash(C.first) != C.second; }))
          enqueueLocked(Uri);
    }
    // A worker still reading the old file has it open; unlinking does not disturb it.
    if (!Old.empty())
      sys::fs::remove(Old);
    if (Summarized)
      log(InfoMessage, "project index: " + std::to_string(Merged->size()) + " function(s) from " +
                           std::to_string(TuIndex.size()) + " translation unit(s)");
  }

  void publishFindings(const std::string &Uri, int64_t Version, const std::string &Analyzed,
                       const std::string &Text, const JobResult &R) {
    Positions Pos(Text);
    auto InText = [&](const Span &S) { return S.File == Analyzed; };
    json Diagnostics = json::array();
    std::vector<json> Actions;
    for (const Finding &F : R.Findings) {
      // Compiler diagnostics are clangd's to show; findings in other files, their own
      // documents'.
      if (StringRef(F.Check).starts_with("clang-diagnostic-") || !InText(F.Primary.Where) ||
          F.Primary.Where.Line == 0)
        continue;
      json D = {{"range", Pos.range(F.Primary.Where, true)},
                {"severity", F.Level == "error" || F.WarningAsError ? SeverityError : SeverityWarning},
                {"source", "torchtidy"},
                {"code", F.Check},
                {"codeDescription", {{"href", helpUri(F.Check)}}},
                {"message", F.Primary.Text}};
      json Related = json::array();
      for (const Message &N : F.Notes)
        if (!N.Where.File.empty() && N.Where.Line)
          Related.push_back({{"location",
                              {{"uri", uriFromPath(N.Where.File)},
                               {"range", Pos.range(N.Where, InText(N.Where))}}},
                             {"message", N.Text}});
      if (!Related.empty())
        D["relatedInformation"] = std::move(Related);
      // The warning's fix is the preferred quick fix; a note's fix (a choice the user makes,
      // applied by --fix-notes on the command line) is offered too, titled by its note.
      auto Offer = [&](const Message &M, bool Preferred) {
        json Edits = json::object();
        for (const Replacement &Rp : M.Fix)
          if (!Rp.Where.File.empty() && Rp.Where.Line)
            Edits[InText(Rp.Where) ? Uri : uriFromPath(Rp.Where.File)].push_back(
                {{"range", Pos.range(Rp.Where, InText(Rp.Where))}, {"newText", Rp.Text}});
        if (!Edits.empty())
          Actions.push_back({{"title", "fix " + F.Check + ": " + M.Text},
                             {"kind", "quickfix"},
                             {"diagnostics", json::array({D})},
                             {"isPreferred", Preferred},
                             {"edit", {{"changes", std::move(Edits)}}}});
      };
      Offer(F.Primary, true);
      for (const Message &N : F.Notes)
        Offer(N, false);
      Diagnostics.push_back(std::move(D));
    }
    publish(Uri, Version, std::move(Diagnostics), std::move(Actions));
  }

  void publish(const std::string &Uri, int64_t Version, json Diagnostics,
               std::vector<json> Actions) {
    {
      std::lock_guard<std::mutex> G(Lock);
      auto It = Docs.find(Uri);
      if (It == Docs.end() || It->second.Version != Version)
        return;
      It->second.Actions = std::move(Actions);
    }
    notify("textDocument/publishDiagnostics",
           {{"uri", Uri}, {"version", Version}, {"diagnostics", std::move(Diagnostics)}});
  }

  const std::string Self;
  const std::vector<const char *> WorkerArgs;
  /// Replays a saved, unchanged file (opening it again costs nothing).
  const std::unique_ptr<ResultCache> Cache;
  SmallString<128> TmpDir;
  unsigned Analyses = 0; // names the temporary files (analyzer thread only)
  std::set<std::string> SaidDropped; // compile options already reported (analyzer thread only)
  // The project index (analyzer thread only): each translation unit's summaries as the worker
  // wrote them and parsed, the databases whose other TUs are queued, the index files' count.
  std::map<std::string, std::string> TuSummaries;
  std::map<std::string, ProjectIndex> TuIndex;
  std::set<std::string> IndexedDatabases;
  bool IndexDirty = false;
  unsigned IndexVersion = 0;
  std::mutex OutLock;
  std::mutex Lock; // guards everything below
  std::condition_variable Wake;
  std::map<std::string, Document> Docs;
  std::deque<std::string> Queue;
  /// Translation units to summarize when no document waits, and how many were ever queued.
  std::deque<Job> IndexTodo;
  size_t IndexTotal = 0;
  /// The current project index: its file (empty: none yet) and its answers.
  std::string IndexPath;
  std::shared_ptr<const ProjectIndex> CurrentIndex;
  Running Current;
  unsigned Requests = 0;
  bool Initialized = false, ShutDown = false, Stopping = false, ProgressSupported = false;
};

} // namespace

int runLsp(StringRef Self, ArrayRef<const char *> WorkerArgs) {
  return Server(Self.str(), WorkerArgs.vec()).run();
}

} // namespace torchtidy::driver
