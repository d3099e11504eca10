//! Drives the `mirror-kernel` binary over loopback with ZeroMQ sockets of our own: signed
//! kernel_info on shell and control, heartbeat echo, a forged message dropped without an
//! answer, and a shutdown that ends the process cleanly.

use std::process::{Child, Command};
use std::time::{Duration, Instant};

use mirror_kernel::protocol::message::{Message, Parent};
use mirror_kernel::protocol::{wire, Signer};
use serde_json::json;
use zeromq::{DealerSocket, ReqSocket, Socket, SocketRecv, SocketSend, ZmqMessage};

const KEY: &str = "loopback-test-key";

fn free_port() -> u16 {
    let l = std::net::TcpListener::bind("127.0.0.1:0").unwrap();
    l.local_addr().unwrap().port()
}

struct Kernel {
    child: Child,
    ports: [u16; 5],
    _dir: std::path::PathBuf,
}

impl Drop for Kernel {
    fn drop(&mut self) {
        let _ = self.child.kill();
        let _ = self.child.wait();
    }
}

fn start_kernel() -> Kernel {
    let ports = [
        free_port(),
        free_port(),
        free_port(),
        free_port(),
        free_port(),
    ];
    let dir = std::env::temp_dir().join(format!("mirror-loopback-{}", uuid::Uuid::new_v4()));
    std::fs::create_dir_all(&dir).unwrap();
    let file = dir.join("conn.json");
    let info = json!({
        "shell_port": ports[0], "iopub_port": ports[1], "stdin_port": ports[2],
        "control_port": ports[3], "hb_port": ports[4], "ip": "127.0.0.1", "key": KEY,
        "transport": "tcp", "signature_scheme": "hmac-sha256", "kernel_name": "mirror",
    });
    std::fs::write(&file, info.to_string()).unwrap();
    let child = Command::new(env!("CARGO_BIN_EXE_mirror-kernel"))
        .args(["kernel", "-f"])
        .arg(&file)
        .spawn()
        .unwrap();
    Kernel {
        child,
        ports,
        _dir: dir,
    }
}

fn to_zmq(frames: Vec<Vec<u8>>) -> ZmqMessage {
    let mut it = frames.into_iter();
    let mut msg = ZmqMessage::from(it.next().unwrap());
    for f in it {
        msg.push_back(f.into());
    }
    msg
}

fn request(msg_type: &str, content: serde_json::Value) -> Message {
    let mut m = Parent::none().child("client-session", msg_type, content);
    m.identities.clear();
    m
}

async fn connect_dealer(port: u16) -> DealerSocket {
    let mut s = DealerSocket::new();
    let deadline = Instant::now() + Duration::from_secs(10);
    loop {
        match s.connect(&format!("tcp://127.0.0.1:{port}")).await {
            Ok(()) => return s,
            Err(e) if Instant::now() > deadline => panic!("cannot connect: {e}"),
            Err(_) => tokio::time::sleep(Duration::from_millis(20)).await,
        }
    }
}

async fn recv_reply(
    socket: &mut DealerSocket,
    signer: &Signer,
    within: Duration,
) -> Option<Message> {
    let raw = tokio::time::timeout(within, socket.recv())
        .await
        .ok()?
        .ok()?;
    let frames = raw.into_vec().into_iter().map(|b| b.to_vec()).collect();
    Some(wire::parse(frames, signer).expect("a reply must be well-formed and signed"))
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn kernel_answers_over_loopback_and_shuts_down_cleanly() {
    let mut kernel = start_kernel();
    let signer = Signer::new(KEY);
    let mut shell = connect_dealer(kernel.ports[0]).await;
    let mut control = connect_dealer(kernel.ports[3]).await;

    // A forged request gets no answer at all.
    let forged = request("kernel_info_request", json!({}));
    let frames = wire::serialize(&forged, &Signer::new("not the key")).unwrap();
    shell.send(to_zmq(frames)).await.unwrap();
    assert!(recv_reply(&mut shell, &signer, Duration::from_millis(500))
        .await
        .is_none());

    // A signed one is answered, parented to the request, signed with the key.
    let req = request("kernel_info_request", json!({}));
    shell
        .send(to_zmq(wire::serialize(&req, &signer).unwrap()))
        .await
        .unwrap();
    let reply = recv_reply(&mut shell, &signer, Duration::from_secs(10))
        .await
        .unwrap();
    assert_eq!(reply.msg_type(), "kernel_info_reply");
    assert_eq!(reply.parent_header["msg_id"], req.header.msg_id.as_str());
    assert_eq!(reply.content["language_info"]["name"], "python");

    // The heartbeat echoes what it is sent.
    let mut hb = ReqSocket::new();
    hb.connect(&format!("tcp://127.0.0.1:{}", kernel.ports[4]))
        .await
        .unwrap();
    hb.send(ZmqMessage::from(b"ping".to_vec())).await.unwrap();
    let echo = tokio::time::timeout(Duration::from_secs(5), hb.recv())
        .await
        .unwrap()
        .unwrap();
    assert_eq!(echo.get(0).map(|b| b.to_vec()), Some(b"ping".to_vec()));

    // Shutdown is answered on control, then the process exits with status 0.
    let req = request("shutdown_request", json!({"restart": false}));
    control
        .send(to_zmq(wire::serialize(&req, &signer).unwrap()))
        .await
        .unwrap();
    let reply = recv_reply(&mut control, &signer, Duration::from_secs(5))
        .await
        .unwrap();
    assert_eq!(reply.msg_type(), "shutdown_reply");
    assert_eq!(reply.content["status"], "ok");
    let deadline = Instant::now() + Duration::from_secs(5);
    let status = loop {
        if let Some(status) = kernel.child.try_wait().unwrap() {
            break status;
        }
        assert!(
            Instant::now() < deadline,
            "the kernel did not exit within 5 s"
        );
        tokio::time::sleep(Duration::from_millis(20)).await;
    };
    assert!(status.success());
}
