// Generators of the quantized plans (qdirect, qhier). Every rank runs two queues per channel (qhier: two over
// the host's connections and two over those between hosts):
//   the send queue:  everything this rank sends, in phase order;
//   the recv queue:  everything it receives, accumulates and finishes, in phase order.
// Within a phase both queues walk their peers pairwise (send to r + k while receiving from r - k), the order
// of a pairwise exchange, so bounded FIFOs never deadlock; a send that needs a result of the recv queue
// (the owner's encoded chunk, a chunk to forward) waits for that step of the recv queue. A connection
// carries its phases in order because one queue sends on it and one queue receives from it.
#include "algorithms/quant_plans.h"

#include <algorithm>
#include <sstream>

#include "exec/quant/quant_spec.h"

namespace strata {

const char* QStepOpName(QStepOp op) {
  switch (op) {
    case QStepOp::SendQuant: return "sendQuant";
    case QStepOp::SendRaw: return "sendRaw";
    case QStepOp::RecvAccum: return "recvAccum";
    case QStepOp::Finish: return "finish";
    case QStepOp::SendEnc: return "sendEnc";
    case QStepOp::RecvEnc: return "recvEnc";
  }
  return "?";
}

const char* QuantAlgoName(QuantAlgo a) { return a == QuantAlgo::Hier ? "qhier" : "qdirect"; }

bool QuantAlgoByName(const std::string& name, QuantAlgo* out) {
  if (name == "qdirect") *out = QuantAlgo::Direct;
  else if (name == "qhier") *out = QuantAlgo::Hier;
  else return false;
  return true;
}

bool QuantAlgoServes(CollKind kind) {
  return kind == CollKind::AllReduce || kind == CollKind::ReduceScatter || kind == CollKind::AllGather;
}

uint64_t QuantPieceElems(const math::QuantParams& p, size_t slotBytes) {
  return QuantBlockElementsFitting(p, slotBytes);
}

uint64_t QuantEncRangeBytes(const math::QuantParams& p, uint64_t piece, uint64_t count) {
  const uint64_t full = count / piece, rest = count % piece;
  return full * math::QuantEncodedBytes(p, piece) + math::QuantEncodedBytes(p, rest);
}

std::string QuantPlan::toJson() const {
  std::ostringstream os;
  os << "{\"algorithm\":\"" << algorithm << "\",\"dtype\":" << dtype << ",\"divisor\":" << divisor
     << ",\"format\":" << static_cast<int>(params.format) << ",\"block\":" << params.block
     << ",\"accElems\":" << accElems << ",\"encBytes\":" << encBytes << ",\"queues\":[";
  for (size_t q = 0; q < queues.size(); ++q) {
    if (q) os << ',';
    os << "{\"channel\":" << queues[q].channel << ",\"steps\":[";
    for (size_t i = 0; i < queues[q].steps.size(); ++i) {
      const QStep& s = queues[q].steps[i];
      if (i) os << ',';
      os << "{\"op\":\"" << QStepOpName(s.op) << "\",\"recv\":" << s.recvPeer << ",\"send\":" << s.sendPeer
         << ",\"src\":[" << s.src.buf << ',' << s.src.offset << "],\"dst\":[" << s.dst.buf << ',' << s.dst.offset
         << "],\"count\":" << s.count << ",\"enc\":" << s.encByte << ",\"index\":" << s.index << '}';
    }
    os << "]}";
  }
  os << "]}";
  return os.str();
}

namespace {

int Mod(int a, int n) { return ((a % n) + n) % n; }

// [off, off + len) of part i of k, cut on block boundaries (the last part takes the rest).
void BlockPart(uint64_t count, uint64_t block, int i, int k, uint64_t* off, uint64_t* len) {
  const uint64_t blocks = (count + block - 1) / block;
  const uint64_t b0 = blocks * i / k, b1 = blocks * (i + 1) / k;
  *off = std::min(count, b0 * block);
  *len = std::min(count, b1 * block) - *off;
}

// Steps of the two queues of one channel, and the encoded buffer's layout (the same on every rank).
class QuantEmitter {
 public:
  QuantEmitter(QuantPlan* plan, int channel) : plan_(plan) {
    piece_ = QuantPieceElems(plan->params, plan->slotBytes);
    plan->addQueue(channel);
    plan->addQueue(channel);
    sendIdx_ = plan->queues.size() - 2;
    recvIdx_ = plan->queues.size() - 1;
  }

  QPlanQueue& send() { return plan_->queues[sendIdx_]; }
  QPlanQueue& recv() { return plan_->queues[recvIdx_]; }
  int recvQueueIndex() const { return static_cast<int>(recvIdx_); }
  // The steps the recv queue holds so far: a send that needs them waits for that many.
  uint32_t recvMark() { return static_cast<uint32_t>(recv().steps.size()); }

  // Reserves the encoded bytes of a range of `count` elements.
  uint64_t reserveEnc(uint64_t count) {
    const uint64_t at = plan_->encBytes;
    plan_->encBytes += QuantEncRangeBytes(plan_->params, piece_, count);
    return at;
  }

  static bool Add(QPlanQueue& q, const QStep& s) {
    if (s.count == 0) return false;
    q.steps.push_back(s);
    return true;
  }

 private:
  QuantPlan* plan_;
  size_t sendIdx_ = 0, recvIdx_ = 0;
  uint64_t piece_ = 0;
};

QStep MakeStep(QStepOp op, int recvPeer, int sendPeer, QRef src, QRef dst, uint64_t count, uint64_t index,
               uint32_t stream) {
  QStep s;
  s.op = op;
  s.recvPeer = recvPeer;
  s.sendPeer = sendPeer;
  s.src = src;
  s.dst = dst;
  s.count = count;
  s.index = index;
  s.stream = stream;
  return s;
}

// Streams of the random bits: rank r's quantization at stage 0 (what it sends to be reduced) and stage 1
// (the reduced chunk it owns).
uint32_t Stream(int rank, int stage) { return static_cast<uint32_t>(rank) * 4u + static_cast<uint32_t>(stage); }

QuantPlan NewQuantPlan(const char* name, const CollDesc& desc, const PlanGeometry& geo, const math::QuantParams& p) {
  QuantPlan plan;
  plan.algorithm = name;
  plan.kind = desc.kind;
  plan.dtype = desc.dtype;
  plan.divisor = desc.op == strataAvg ? geo.nranks : 1;
  plan.params = p;
  plan.slotBytes = geo.slotBytes;
  return plan;
}

int Channels(const PlanGeometry& geo) { return std::max(1, geo.nchannels); }

// The waiting step: `s` may start once the recv queue has done `mark` steps.
QStep After(QStep s, int queue, uint32_t mark) {
  s.waitQueue = queue;
  s.waitSteps = mark;
  return s;
}

// A large allreduce runs in pieces (whole blocks, at least kPieceFifos FIFOs' worth of fp32 each, at most
// kMaxPieces): the owner finishes piece p as soon as its contributions are in and its send of the result queues
// behind the first phase of the later pieces, so the link never waits for a whole chunk to be finished.
constexpr uint64_t kPieceFifos = 4;
constexpr int kMaxPieces = 8;

int Pieces(const PlanGeometry& geo, uint64_t count) {
  const uint64_t pieceElems = kPieceFifos * geo.nslots * geo.slotBytes / sizeof(float);
  return static_cast<int>(std::clamp<uint64_t>(count / std::max<uint64_t>(1, pieceElems), 1, kMaxPieces));
}

void DirectAllReduce(QuantPlan* plan, const CollDesc& desc, const PlanGeometry& geo) {
  const int n = geo.nranks, r = geo.rank;
  const uint64_t block = plan->params.block;
  plan->accElems = desc.count;
  const bool avg = plan->divisor > 1;
  for (int c = 0; c < Channels(geo); ++c) {
    uint64_t coff, clen;
    BlockPart(desc.count, block, c, Channels(geo), &coff, &clen);
    QuantEmitter e(plan, c);
    const int pieces = Pieces(geo, clen);
    // off[p][o], len[p][o], enc[p][o]: owner o's chunk of piece p.
    std::vector<std::vector<uint64_t>> off(pieces, std::vector<uint64_t>(n)), len = off, enc = off;
    std::vector<uint32_t> finished(pieces);
    for (int p = 0; p < pieces; ++p) {
      uint64_t poff, plen;
      BlockPart(clen, block, p, pieces, &poff, &plen);
      for (int o = 0; o < n; ++o) {
        BlockPart(plen, block, o, n, &off[p][o], &len[p][o]);
        off[p][o] += coff + poff;
        enc[p][o] = e.reserveEnc(len[p][o]);
      }
    }
    for (int p = 0; p < pieces; ++p) {
      // Phase 1: each owner gets its chunk from every rank, quantized once.
      for (int k = 1; k < n; ++k) {
        const int to = Mod(r + k, n), from = Mod(r - k, n);
        QuantEmitter::Add(e.send(), MakeStep(QStepOp::SendQuant, -1, to, {kQSendBuf, off[p][to]}, {}, len[p][to],
                                             off[p][to], Stream(r, 0)));
        QStep a = MakeStep(QStepOp::RecvAccum, from, -1, {kQSendBuf, off[p][r]}, {kQAccBuf, off[p][r]}, len[p][r],
                           off[p][r], 0);
        a.first = k == 1;
        QuantEmitter::Add(e.recv(), a);
      }
      // The owner quantizes the reduced chunk once and takes its own result from those bytes.
      QStep f = MakeStep(QStepOp::Finish, -1, -1, {kQAccBuf, off[p][r]}, {kQRecvBuf, off[p][r]}, len[p][r], off[p][r],
                         Stream(r, 1));
      f.encByte = enc[p][r];
      f.divide = avg;
      QuantEmitter::Add(e.recv(), f);
      finished[p] = e.recvMark();
    }
    // Phase 2: every owner's encoded chunk to every rank, dequantized on arrival.
    for (int p = 0; p < pieces; ++p) {
      for (int k = 1; k < n; ++k) {
        const int to = Mod(r + k, n), from = Mod(r - k, n);
        QStep s = MakeStep(QStepOp::SendEnc, -1, to, {kQEncBuf, off[p][r]}, {}, len[p][r], off[p][r], 0);
        s.encByte = enc[p][r];
        QuantEmitter::Add(e.send(), After(s, e.recvQueueIndex(), finished[p]));
        QStep d = MakeStep(QStepOp::RecvEnc, from, -1, {}, {kQRecvBuf, off[p][from]}, len[p][from], off[p][from], 0);
        d.deq = true;
        QuantEmitter::Add(e.recv(), d);
      }
    }
  }
}

void DirectReduceScatter(QuantPlan* plan, const CollDesc& desc, const PlanGeometry& geo) {
  const int n = geo.nranks, r = geo.rank;
  const uint64_t cnt = desc.count;
  plan->accElems = cnt;
  for (int c = 0; c < Channels(geo); ++c) {
    uint64_t coff, clen;
    BlockPart(cnt, plan->params.block, c, Channels(geo), &coff, &clen);
    QuantEmitter e(plan, c);
    for (int k = 1; k < n; ++k) {
      const int to = Mod(r + k, n), from = Mod(r - k, n);
      const uint64_t at = static_cast<uint64_t>(to) * cnt + coff;
      QuantEmitter::Add(e.send(), MakeStep(QStepOp::SendQuant, -1, to, {kQSendBuf, at}, {}, clen, at, Stream(r, 0)));
      const uint64_t mine = static_cast<uint64_t>(r) * cnt + coff;
      QStep a = MakeStep(QStepOp::RecvAccum, from, -1, {kQSendBuf, mine}, {kQAccBuf, coff}, clen, mine, 0);
      a.first = k == 1;
      QuantEmitter::Add(e.recv(), a);
    }
    // The owner alone holds this chunk: its fp32 sum is the result, with no second quantization.
    QStep f = MakeStep(QStepOp::Finish, -1, -1, {kQAccBuf, coff}, {kQRecvBuf, coff}, clen, 0, 0);
    f.exact = true;
    f.divide = plan->divisor > 1;
    QuantEmitter::Add(e.recv(), f);
  }
}

void DirectAllGather(QuantPlan* plan, const CollDesc& desc, const PlanGeometry& geo) {
  const int n = geo.nranks, r = geo.rank;
  const uint64_t cnt = desc.count;
  for (int c = 0; c < Channels(geo); ++c) {
    uint64_t coff, clen;
    BlockPart(cnt, plan->params.block, c, Channels(geo), &coff, &clen);
    QuantEmitter e(plan, c);
    std::vector<uint64_t> enc(n);
    for (int o = 0; o < n; ++o) enc[o] = e.reserveEnc(clen);
    const uint64_t mine = static_cast<uint64_t>(r) * cnt + coff;
    // Every rank, this one included, takes rank r's block from the same encoded bytes.
    QStep f = MakeStep(QStepOp::Finish, -1, -1, {kQSendBuf, coff}, {kQRecvBuf, mine}, clen, mine, Stream(r, 1));
    f.encByte = enc[r];
    QuantEmitter::Add(e.recv(), f);
    const uint32_t finished = e.recvMark();
    for (int k = 1; k < n; ++k) {
      const int to = Mod(r + k, n), from = Mod(r - k, n);
      QStep s = MakeStep(QStepOp::SendEnc, -1, to, {kQEncBuf, mine}, {}, clen, mine, 0);
      s.encByte = enc[r];
      QuantEmitter::Add(e.send(), After(s, e.recvQueueIndex(), finished));
      const uint64_t theirs = static_cast<uint64_t>(from) * cnt + coff;
      QStep d = MakeStep(QStepOp::RecvEnc, from, -1, {}, {kQRecvBuf, theirs}, clen, theirs, 0);
      d.deq = true;
      QuantEmitter::Add(e.recv(), d);
    }
  }
}

// One host per hostOf value, each with the same number (two or more) of ranks; false for other shapes.
bool HostGrid(const PlanGeometry& geo, std::vector<std::vector<int>>* hosts, int* h, int* i) {
  if (static_cast<int>(geo.hostOf.size()) != geo.nranks) return false;
  int nh = 0;
  for (int x : geo.hostOf) {
    if (x < 0) return false;
    nh = std::max(nh, x + 1);
  }
  hosts->assign(nh, {});
  for (int r = 0; r < geo.nranks; ++r) {
    std::vector<int>& v = (*hosts)[geo.hostOf[r]];
    if (r == geo.rank) {
      *h = geo.hostOf[r];
      *i = static_cast<int>(v.size());
    }
    v.push_back(r);
  }
  if (nh < 2) return false;
  for (const std::vector<int>& v : *hosts)
    if (v.size() != (*hosts)[0].size() || v.size() < 2) return false;
  return true;
}

}  // namespace

QuantPlan QDirectPlan(const CollDesc& desc, const PlanGeometry& geo, const math::QuantParams& p) {
  QuantPlan plan = NewQuantPlan("qdirect", desc, geo, p);
  if (geo.nranks == 1) {
    // One rank: nothing crosses a link, so nothing is quantized.
    plan.accElems = 0;
    QPlanQueue& q = plan.addQueue(0);
    QStep f = MakeStep(QStepOp::Finish, -1, -1, {kQSendBuf, 0}, {kQRecvBuf, 0}, desc.count, 0, 0);
    f.exact = true;
    QuantEmitter::Add(q, f);
    return plan;
  }
  switch (desc.kind) {
    case CollKind::ReduceScatter: DirectReduceScatter(&plan, desc, geo); break;
    case CollKind::AllGather: DirectAllGather(&plan, desc, geo); break;
    default: DirectAllReduce(&plan, desc, geo); break;
  }
  return plan;
}

// Hierarchical allreduce over H hosts of L ranks: the buffer is cut into pieces (as qdirect's), each piece into
// L local chunks, each of those into H sub-chunks; sub-chunk (l, g) is owned by the rank with local index l on
// host g.
//   1. exact fp32 reduce-scatter within the host: local rank l sums local chunk l of its host;
//   2. quantized direct reduce-scatter of local chunk l among the ranks with local index l: the owner of
//      sub-chunk (l, g) sums the host partials in fp32, quantizes once and dequantizes its own result;
//   3. the owner sends its encoded sub-chunk to the other hosts' rank l, and each rank l forwards the H
//      encoded sub-chunks of local chunk l, as they are, to its local peers, who dequantize them.
// Steps 1 and 3b run on the queues of the host's connections, 2 and 3a on those between hosts, every phase
// piece by piece: a piece crosses the network while the host reduces the next one and spreads the last one.
QuantPlan QHierAllReducePlan(const CollDesc& desc, const PlanGeometry& geo, const math::QuantParams& p) {
  std::vector<std::vector<int>> hosts;
  int h = 0, i = 0;
  if (desc.kind != CollKind::AllReduce || !HostGrid(geo, &hosts, &h, &i)) return QDirectPlan(desc, geo, p);
  QuantPlan plan = NewQuantPlan("qhier", desc, geo, p);
  const int nh = static_cast<int>(hosts.size()), nl = static_cast<int>(hosts[0].size());
  const int r = geo.rank;
  const uint64_t block = p.block;
  plan.accElems = desc.count;
  const std::vector<int>& local = hosts[h];
  for (int c = 0; c < Channels(geo); ++c) {
    uint64_t coff, clen;
    BlockPart(desc.count, block, c, Channels(geo), &coff, &clen);
    QuantEmitter host(&plan, c), net(&plan, c);  // over the host's connections; over those between hosts
    const int pieces = Pieces(geo, clen);
    // For piece q: lo[q][l], ll[q][l]: local chunk l; so[q][l][g], sl[q][l][g], enc[q][l][g]: its sub-chunks.
    using Grid = std::vector<std::vector<uint64_t>>;
    Grid lo(pieces, std::vector<uint64_t>(nl)), ll = lo;
    std::vector<Grid> so(pieces, Grid(nl, std::vector<uint64_t>(nh))), sl = so, enc = so;
    for (int q = 0; q < pieces; ++q) {
      uint64_t poff, plen;
      BlockPart(clen, block, q, pieces, &poff, &plen);
      for (int l = 0; l < nl; ++l) {
        BlockPart(plen, block, l, nl, &lo[q][l], &ll[q][l]);
        lo[q][l] += coff + poff;
        for (int g = 0; g < nh; ++g) {
          BlockPart(ll[q][l], block, g, nh, &so[q][l][g], &sl[q][l][g]);
          so[q][l][g] += lo[q][l];
          enc[q][l][g] = host.reserveEnc(sl[q][l][g]);
        }
      }
    }
    std::vector<uint32_t> hostSummed(pieces), finished(pieces), gathered(pieces);
    // 1. Exact within the host.
    for (int q = 0; q < pieces; ++q) {
      const std::vector<uint64_t>&o = lo[q], &len = ll[q];
      for (int k = 1; k < nl; ++k) {
        const int to = Mod(i + k, nl), from = Mod(i - k, nl);
        QuantEmitter::Add(host.send(),
                          MakeStep(QStepOp::SendRaw, -1, local[to], {kQSendBuf, o[to]}, {}, len[to], o[to], 0));
        QStep a = MakeStep(QStepOp::RecvAccum, local[from], -1, {kQSendBuf, o[i]}, {kQAccBuf, o[i]}, len[i], o[i], 0);
        a.first = k == 1;
        a.raw = true;
        QuantEmitter::Add(host.recv(), a);
      }
      hostSummed[q] = host.recvMark();
    }
    // 2. Quantized between hosts, from the host partial sums; the owner finishes each piece once it is summed.
    for (int q = 0; q < pieces; ++q) {
      const std::vector<uint64_t>&o = so[q][i], &len = sl[q][i];
      for (int k = 1; k < nh; ++k) {
        const int to = Mod(h + k, nh), from = Mod(h - k, nh);
        QStep s = MakeStep(QStepOp::SendQuant, -1, hosts[to][i], {kQAccBuf, o[to]}, {}, len[to], o[to], Stream(r, 0));
        QuantEmitter::Add(net.send(), After(s, host.recvQueueIndex(), hostSummed[q]));
        // Added to the host's partial sum: not before the host has summed it.
        QStep a = MakeStep(QStepOp::RecvAccum, hosts[from][i], -1, {kQAccBuf, o[h]}, {kQAccBuf, o[h]}, len[h], o[h], 0);
        QuantEmitter::Add(net.recv(), After(a, host.recvQueueIndex(), hostSummed[q]));
      }
      QStep f = MakeStep(QStepOp::Finish, -1, -1, {kQAccBuf, o[h]}, {kQRecvBuf, o[h]}, len[h], o[h], Stream(r, 1));
      f.encByte = enc[q][i][h];
      f.divide = plan.divisor > 1;
      QuantEmitter::Add(net.recv(), f);
      finished[q] = net.recvMark();
    }
    // 3a. The owned sub-chunk to the other hosts; theirs kept to forward.
    for (int q = 0; q < pieces; ++q) {
      const std::vector<uint64_t>&o = so[q][i], &len = sl[q][i];
      for (int k = 1; k < nh; ++k) {
        const int to = Mod(h + k, nh), from = Mod(h - k, nh);
        QStep s = MakeStep(QStepOp::SendEnc, -1, hosts[to][i], {kQEncBuf, o[h]}, {}, len[h], o[h], 0);
        s.encByte = enc[q][i][h];
        QuantEmitter::Add(net.send(), After(s, net.recvQueueIndex(), finished[q]));
        QStep d = MakeStep(QStepOp::RecvEnc, hosts[from][i], -1, {}, {kQRecvBuf, o[from]}, len[from], o[from], 0);
        d.encByte = enc[q][i][from];
        d.store = true;
        d.deq = true;
        QuantEmitter::Add(net.recv(), d);
      }
      gathered[q] = net.recvMark();
    }
    // 3b. Local chunk i, all of its encoded sub-chunks, to the local peers; theirs from them.
    for (int q = 0; q < pieces; ++q) {
      for (int k = 1; k < nl; ++k) {
        const int to = Mod(i + k, nl), from = Mod(i - k, nl);
        for (int g = 0; g < nh; ++g) {
          QStep s = MakeStep(QStepOp::SendEnc, -1, local[to], {kQEncBuf, so[q][i][g]}, {}, sl[q][i][g], so[q][i][g], 0);
          s.encByte = enc[q][i][g];
          QuantEmitter::Add(host.send(), After(s, net.recvQueueIndex(), gathered[q]));
        }
        for (int g = 0; g < nh; ++g) {
          QStep d = MakeStep(QStepOp::RecvEnc, local[from], -1, {}, {kQRecvBuf, so[q][from][g]}, sl[q][from][g],
                             so[q][from][g], 0);
          d.deq = true;
          QuantEmitter::Add(host.recv(), d);
        }
      }
    }
  }
  return plan;
}

QuantPlan BuildQuantPlan(QuantAlgo algo, const CollDesc& desc, const PlanGeometry& geo, const math::QuantParams& p) {
  if (algo == QuantAlgo::Hier) return QHierAllReducePlan(desc, geo, p);
  return QDirectPlan(desc, geo, p);
}

}  // namespace strata
