#include "algorithms/plan.h"

#include <sstream>

namespace strata {

const char* StepOpName(StepOp op) {
  switch (op) {
    case StepOp::Send: return "send";
    case StepOp::Recv: return "recv";
    case StepOp::RecvReduce: return "recvReduce";
    case StepOp::RecvReduceSend: return "recvReduceSend";
    case StepOp::RecvReduceCopySend: return "recvReduceCopySend";
    case StepOp::RecvCopySend: return "recvCopySend";
    case StepOp::Copy: return "copy";
    case StepOp::LocalReduce: return "localReduce";
    case StepOp::Signal: return "signal";
    case StepOp::WaitPeer: return "waitPeer";
    case StepOp::ClaimWindow:
      return "claimWindow";
    case StepOp::PeerRead:
      return "peerRead";
    case StepOp::PeerReduce:
      return "peerReduce";
    case StepOp::PeerWrite:
      return "peerWrite";
  }
  return "?";
}

std::string Plan::toJson() const {
  std::ostringstream os;
  os << "{\"algorithm\":\"" << algorithm << "\",\"dtype\":" << dtype << ",\"op\":" << op << ",\"divisor\":" << divisor
     << ",\"buffers\":" << nBuffers;
  if (scratchElems) os << ",\"scratchElems\":" << scratchElems;
  if (windowElems) os << ",\"windowElems\":" << windowElems;
  if (peerElems) os << ",\"peerElems\":" << peerElems;
  os << ",\"queues\":[";
  for (size_t q = 0; q < queues.size(); ++q) {
    if (q) os << ',';
    os << "{\"channel\":" << queues[q].channel << ",\"steps\":[";
    for (size_t i = 0; i < queues[q].steps.size(); ++i) {
      const Step& s = queues[q].steps[i];
      if (i) os << ',';
      os << "{\"op\":\"" << StepOpName(s.op) << "\",\"count\":" << s.count;
      if (s.recvPeer >= 0) os << ",\"recvPeer\":" << s.recvPeer;
      if (s.sendPeer >= 0) os << ",\"sendPeer\":" << s.sendPeer;
      os << ",\"src\":[" << s.src.buf << ',' << s.src.offset << "],\"dst\":[" << s.dst.buf << ',' << s.dst.offset
         << ']';
      if (s.op == StepOp::PeerRead || s.op == StepOp::PeerReduce || s.op == StepOp::PeerWrite)
        os << ",\"peer\":[" << s.peer.buf << ',' << s.peer.offset << ']';
      if (s.postDivide) os << ",\"postDivide\":true";
      if (s.waitQueue >= 0) os << ",\"waitQueue\":" << s.waitQueue << ",\"waitSteps\":" << s.waitSteps;
      os << '}';
    }
    os << "]}";
  }
  os << "]}";
  return os.str();
}

}  // namespace strata
